import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { adminEnv, booleanEnv, checkAdminPort, commonEnv, parseEnv, port, qrMarkerParamEnv } from '../../shared/config/env.ts';
import { checkNatsFields } from '../../shared/config/nats-env.ts';
import { API_KEY_CACHE_MS } from './middleware/key-cache.ts';
import { IDEMPOTENCY_LEASE_SECONDS } from './middleware/idempotency.ts';
import { isLocalHost } from './local-host.ts';

/** How long a verified domain's TXT record may stay missing before it turns failed (DOMAIN_RECHECK_GRACE_MS). */
export const DOMAIN_RECHECK_GRACE_DEFAULT_MS = 7 * 86_400_000;

const emptyAsUndefined = (v: unknown) => (v === '' ? undefined : v);

export const apiEnv = z
  .object({
    ...commonEnv,
    API_PORT: port(3000),
    /**
     * /metrics (with /health and /ready) for the operator, off API_PORT: it counts every
     * workspace's traffic, which no API key may read. npm start serves it with the
     * redirector's, on the redirector's ADMIN_PORT.
     */
    ...adminEnv(9092),
    /** The redirector's port (the same variable it listens on): the default REDIRECT_BASE_URL points there. */
    REDIRECT_PORT: port(8080),
    /** Base of `shortUrl` (and of what QR codes encode) on the default domain. */
    REDIRECT_BASE_URL: z.preprocess(
      emptyAsUndefined,
      z
        .string()
        .url()
        .refine((u) => /^https?:\/\//.test(u), 'must be an http(s) URL')
        .transform((u) => u.replace(/\/+$/, ''))
        .optional(),
    ),
    /** Encoded into QR codes as `?<name>=1`: the redirectors' setting, so scans count as source `qr`. */
    ...qrMarkerParamEnv,
    /** DNS servers for domain verification, `ip` or `ip:port`, comma-separated; empty: the system's. */
    DNS_SERVERS: z
      .string()
      .default('')
      .transform((v) => v.split(',').map((s) => s.trim()).filter(Boolean))
      .pipe(z.array(z.string().regex(/^[\d.:[\]a-fA-F]+$/, 'must be an IP address, optionally with :port'))),
    /** Verified domains' TXT records are checked again this often (domain-rechecks.ts; 0: never)... */
    DOMAIN_RECHECK_EVERY_MS: z.coerce.number().int().min(0).default(86_400_000),
    /** ...and a domain whose record they have not found for this long turns failed. */
    DOMAIN_RECHECK_GRACE_MS: z.coerce.number().int().min(0).default(DOMAIN_RECHECK_GRACE_DEFAULT_MS),
    /** Verifies click ids of conversions; must equal the redirectors' (generated into DATA_DIR when unset). */
    LINKROUTE_SECRET: z.preprocess((v) => (v === '' ? undefined : v), z.string().optional()),
    /** Largest accepted JSON body; bigger is a 413, never buffered. */
    API_MAX_BODY_BYTES: z.coerce.number().int().min(1024).default(1_048_576),
    /** ...except on the bulk routes, where 1,000 links may carry long URLs. */
    API_MAX_BULK_BODY_BYTES: z.coerce.number().int().min(1024).default(16_777_216),
    /**
     * The compacted snapshot redirectors start from is rewritten after this many link
     * changes (a starting redirector replays the changes after it one message each)...
     */
    SNAPSHOT_COMPACT_AFTER_CHANGES: z.coerce.number().int().min(1).default(10_000),
    /** ...or once it is this old with any change after it (a rewrite reads the whole snapshot bucket). */
    SNAPSHOT_COMPACT_MAX_AGE_MS: z.coerce.number().int().min(1_000).default(600_000),
    /**
     * How long an instance reuses a key's lookup (ms): a key revoked (or a plan or scopes
     * changed) is refused (or applied) by every instance at most this long after. 0: every request looks its key up.
     */
    API_KEY_CACHE_MS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(0).max(60_000).default(API_KEY_CACHE_MS)),
    /**
     * How long a running request holds its Idempotency-Key between renewals (s): renewed
     * every quarter of this while it runs; a key whose instance died is free again after it.
     */
    API_IDEMPOTENCY_LEASE_SECONDS: z.coerce.number().int().min(2).max(3_600).default(IDEMPOTENCY_LEASE_SECONDS),
    /**
     * How long a Postgres connection may wait for the server's answer (ms): past it the
     * connection is closed and its requests answer 503, as in an outage (a stalled proxy
     * or network holds a query, and its pool slot, for ever otherwise). Migrations are not bounded.
     */
    API_POSTGRES_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(10_000),
    /** Webhook endpoints on loopback, private, link-local or metadata addresses: refused unless true (tests, private deployments). */
    WEBHOOKS_ALLOW_PRIVATE_TARGETS: booleanEnv.default(false),
    /** The dashboard's built assets, served at /dashboard. */
    DASHBOARD_DIR: z.preprocess((v) => (v === '' ? undefined : v), z.string().default(defaultDashboardDir())),
  })
  .superRefine(checkNatsFields)
  .superRefine(checkAdminPort('API_PORT'))
  // Unset, it follows REDIRECT_PORT: setting only the port must not leave short URLs on 8080.
  .transform((env) => ({ ...env, REDIRECT_BASE_URL: env.REDIRECT_BASE_URL ?? localRedirectBaseUrl(env.REDIRECT_PORT) }));

function localRedirectBaseUrl(port: number): string {
  return `http://localhost:${port}`;
}

/**
 * With REDIRECT_PORT=0 the redirector's port is known only once it listens: a base URL
 * derived from the port then follows the actual one (an explicit REDIRECT_BASE_URL stays).
 */
export function withRedirectorPort<T extends Pick<ApiConfig, 'REDIRECT_PORT' | 'REDIRECT_BASE_URL'>>(config: T, actualPort: number): T {
  if (config.REDIRECT_BASE_URL !== localRedirectBaseUrl(config.REDIRECT_PORT)) return config;
  return { ...config, REDIRECT_BASE_URL: localRedirectBaseUrl(actualPort) };
}

/**
 * A warning when the API listens for other machines (HOST not loopback) while short URLs and
 * QR codes name this one (REDIRECT_BASE_URL unset, or local): every link and printed code it
 * hands out would open only here. Null when the two agree.
 */
export function localShortUrlWarning(config: Pick<ApiConfig, 'HOST' | 'REDIRECT_BASE_URL'>): string | null {
  // 0.0.0.0 and :: name no host to reach but every interface to listen on.
  const listensForOthers = !isLocalHost(config.HOST) || config.HOST === '0.0.0.0' || config.HOST === '::';
  if (!listensForOthers || !isLocalHost(new URL(config.REDIRECT_BASE_URL).hostname)) return null;
  return `REDIRECT_BASE_URL is ${config.REDIRECT_BASE_URL}, but the API listens on ${config.HOST}: short URLs and QR codes will open only on this machine. Set REDIRECT_BASE_URL to the address visitors reach the redirectors at (https://go.example.com)`;
}

/**
 * The dashboard's build beside this service: services/dashboard/dist from the
 * sources, dist/services/dashboard/dist from the compiled build (npm run build
 * copies it there, so an image holding only dist/ serves it too).
 */
function defaultDashboardDir(): string {
  return fileURLToPath(new URL('../dashboard/dist/', import.meta.url));
}

export type ApiConfig = z.output<typeof apiEnv>;

export function loadApiConfig(env: Record<string, string | undefined> = process.env): ApiConfig {
  return parseEnv(apiEnv, env);
}
