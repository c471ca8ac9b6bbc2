import { z } from 'zod';
import { ConfigError } from './config-error.ts';
import { natsEnv } from './nats-env.ts';

/**
 * Environment fields shared by every service. Each service composes its own
 * schema from these in its `config.ts` and parses `process.env` exactly once.
 */
const emptyAsUndefined = (v: unknown) => (v === '' ? undefined : v);

export const port = (fallback: number) => z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).max(65535).default(fallback));
export const optionalUrl = z.preprocess(emptyAsUndefined, z.string().url().optional());
/** `true` or `false` (also `1`/`0`); unset or empty: the schema's default. */
export const booleanEnv = z.preprocess(emptyAsUndefined, z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1').optional());

export const commonEnv = {
  DATABASE_URL: optionalUrl,
  CLICKHOUSE_URL: optionalUrl,
  /** NATS_URL (servers, credentials, tls://), NATS_CREDS, NATS_TLS_CA: see nats-env.ts. */
  ...natsEnv,
  /**
   * Replicas of every stream, KV bucket and object store linkroute creates on NATS (the
   * click and conversion events, the link snapshot, the compacted snapshot, shared click
   * counts, leases): 1 on a single server, 3 on a cluster of three or more.
   */
  NATS_STREAM_REPLICAS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(5).default(1)),
  DATA_DIR: z.preprocess(emptyAsUndefined, z.string().default('./data')),
  HOST: z.preprocess(emptyAsUndefined, z.string().default('127.0.0.1')),
  LOG_LEVEL: z.preprocess(emptyAsUndefined, z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info')),
};

export function parseEnv<T extends z.ZodType>(schema: T, env: Record<string, string | undefined>): z.output<T> {
  const result = schema.safeParse(env);
  if (!result.success) {
    const details = result.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
    throw new ConfigError(`Invalid configuration: ${details.map((d) => `${d.path}: ${d.message}`).join('; ')}`, details);
  }
  return result.data;
}
