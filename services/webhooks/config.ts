import { z } from 'zod';
import { booleanEnv, commonEnv, parseEnv, port } from '../../shared/config/env.ts';
import { checkNatsFields } from '../../shared/config/nats-env.ts';

const ms = (min: number, fallback: number) => z.coerce.number().int().min(min).default(fallback);

export const webhooksEnv = z.object({
  ...commonEnv,
  /** The service's own HTTP port: /health, /ready and /metrics only. */
  WEBHOOKS_PORT: port(8095),
  /**
   * Unseals endpoints' signing secrets: the API's. Unset: $DATA_DIR/secret when another
   * process of that DATA_DIR wrote it; a standalone sender never generates one and refuses
   * to start without either (resolveExistingSecret), as its own would unseal nothing.
   */
  LINKROUTE_SECRET: z.preprocess((v) => (v === '' ? undefined : v), z.string().optional()),
  /** Deliver to loopback, private, link-local and metadata addresses too (tests, private deployments). */
  WEBHOOKS_ALLOW_PRIVATE_TARGETS: booleanEnv.default(false),
  /** Prefix of the durable consumer names: senders sharing it share the work. */
  WEBHOOKS_CONSUMER: z.string().regex(/^[\w-]+$/).default('webhooks'),
  /**
   * How long a Postgres connection may wait for the server's answer; past it the connection
   * is closed and its statements fail (the batch is handed back, a claim let go), as in an
   * outage. Without it a stalled path (a hung proxy, a load balancer that lost the
   * connection's state) would hold the sender's work, and its pool, until TCP gave up.
   */
  WEBHOOKS_POSTGRES_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
  /** How long one attempt may take before it counts as failed. */
  WEBHOOKS_TIMEOUT_MS: ms(100, 10_000),
  /** First retry after about this long; each later one waits about twice as long. */
  WEBHOOKS_RETRY_BASE_MS: ms(10, 5_000),
  /** Retries go on this long after a delivery's first attempt; an endpoint failing this long is disabled. */
  WEBHOOKS_RETRY_WINDOW_MS: ms(1_000, 86_400_000),
  /** link.clicked batches: at most one delivery per endpoint per this interval. */
  WEBHOOKS_CLICK_BATCH_MS: ms(1_000, 1_000),
  /** Attempts running at once per endpoint. */
  WEBHOOKS_MAX_IN_FLIGHT_PER_ENDPOINT: z.coerce.number().int().min(1).max(1_000).default(32),
  /** Finished deliveries (and their events) are listed for this many days, then deleted. */
  WEBHOOKS_RETENTION_DAYS: z.coerce.number().int().min(1).max(3_650).default(30),
  /**
   * link.clicked deliveries (and their batches' bodies), the bulk of the history by far
   * where endpoints take clicks: kept this many days, or WEBHOOKS_RETENTION_DAYS if fewer.
   */
  WEBHOOKS_CLICK_RETENTION_DAYS: z.coerce.number().int().min(1).max(3_650).default(7),
}).superRefine(checkNatsFields);

export type WebhooksConfig = z.output<typeof webhooksEnv>;

export function loadWebhooksConfig(env: Record<string, string | undefined> = process.env): WebhooksConfig {
  return parseEnv(webhooksEnv, env);
}
