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
  /**
   * How long NATS keeps click, conversion and webhook events, read or not (hours). Unset:
   * a stream keeps what it has (7 days when created), so a service started without the
   * setting never undoes it; set, every service's start brings both streams to it.
   */
  NATS_EVENTS_RETENTION_HOURS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(24 * 365).optional()),
  DATA_DIR: z.preprocess(emptyAsUndefined, z.string().default('./data')),
  HOST: z.preprocess(emptyAsUndefined, z.string().default('127.0.0.1')),
  LOG_LEVEL: z.preprocess(emptyAsUndefined, z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info')),
};

/**
 * QR_MARKER_PARAM: the query parameter that marks a QR scan. The API encodes it into QR
 * codes and redirectors read it (source `qr`) and never forward it, so both parse it.
 */
export const qrMarkerParamEnv = {
  QR_MARKER_PARAM: z.preprocess(emptyAsUndefined, z.string().regex(/^[A-Za-z0-9_.-]{1,32}$/, 'must be a plain query parameter name').default('qr')),
};

/** A listening address: an IP address or a host name, without scheme or port. */
const listenHost = (fallback: string) =>
  z.preprocess(emptyAsUndefined, z.string().regex(/^[A-Za-z0-9.:-]+$/, 'must be an IP address or a host name to listen on').default(fallback));

/**
 * ADMIN_PORT and ADMIN_HOST: where a service answers its operator (/metrics, /ready,
 * /health), off its public port and on loopback unless told otherwise; ADMIN_PORT=0
 * takes any free port.
 */
export const adminEnv = (defaultPort: number) => ({ ADMIN_PORT: port(defaultPort), ADMIN_HOST: listenHost('127.0.0.1') });

/** A superRefine: ADMIN_PORT and the public port `publicPort` (a field name) must differ, unless either is 0 (any free port). */
export function checkAdminPort<K extends string>(publicPort: K) {
  return (env: Record<K | 'ADMIN_PORT', unknown>, ctx: z.RefinementCtx): void => {
    const admin = env.ADMIN_PORT;
    if (admin !== 0 && admin === env[publicPort]) ctx.addIssue({ code: 'custom', path: ['ADMIN_PORT'], message: `must differ from ${publicPort} (${String(admin)})` });
  };
}

/**
 * An empty value is an unset one (`FOO=` in a compose file or an .env), whatever the field:
 * its default applies. Fields that read '' as 0 (z.coerce.number) would otherwise take it
 * as a setting: DOMAIN_RECHECK_GRACE_MS= failed every domain whose record was missing once.
 */
export function parseEnv<T extends z.ZodType>(schema: T, env: Record<string, string | undefined>): z.output<T> {
  const set = Object.fromEntries(Object.entries(env).filter(([, value]) => value !== ''));
  const result = schema.safeParse(set);
  if (!result.success) {
    const details = result.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
    throw new ConfigError(`Invalid configuration: ${details.map((d) => `${d.path}: ${d.message}`).join('; ')}`, details);
  }
  return result.data;
}
