import { z } from 'zod';
import { commonEnv, parseEnv, port } from '../../shared/config/env.ts';
import { checkNatsFields } from '../../shared/config/nats-env.ts';

export const ingesterEnv = z.object({
  ...commonEnv,
  /**
   * Bus messages (each a batch of up to ~500 events from a redirector) per ClickHouse insert, at most.
   * 200 is ~100k events, ~40 MB of JSON in hand per batch: past that an insert costs ClickHouse no less
   * per row, and a backlog's first insert starts later.
   */
  INGEST_MAX_MESSAGES: z.coerce.number().int().min(1).max(10_000).default(200),
  /** How long a batch may wait for more messages before it is inserted. */
  INGEST_LINGER_MS: z.coerce.number().int().min(10).max(60_000).default(250),
  /** Durable consumer name: ingesters sharing it share the work. */
  INGEST_CONSUMER: z.string().regex(/^[\w-]+$/).default('ingester'),
  /** The ingester's own HTTP port: /health, /ready and /metrics only (it serves no traffic). */
  INGEST_PORT: port(8090),
  /**
   * Checks the click id of every click event: the redirectors' secret (the same on every
   * service). Unset: $DATA_DIR/secret when another process of that DATA_DIR wrote it; a
   * standalone ingester never generates one and refuses to start without either
   * (resolveExistingSecret), as with another secret it dead-letters every click as forged.
   * npm start generates one for all its parts.
   */
  LINKROUTE_SECRET: z.preprocess((v) => (v === '' ? undefined : v), z.string().optional()),
}).superRefine(checkNatsFields);

export type IngesterConfig = z.output<typeof ingesterEnv>;

export function loadIngesterConfig(env: Record<string, string | undefined> = process.env): IngesterConfig {
  return parseEnv(ingesterEnv, env);
}
