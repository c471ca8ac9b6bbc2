import { z } from 'zod';
import { adminEnv, checkAdminPort, commonEnv, parseEnv, port, qrMarkerParamEnv } from '../../shared/config/env.ts';
import { checkNatsFields } from '../../shared/config/nats-env.ts';

const emptyAsUndefined = (v: unknown) => (v === '' ? undefined : v);

/** An HTTP header name (RFC 9110 token), compared lowercase as uWS reports headers. */
const headerName = z.preprocess(
  emptyAsUndefined,
  z
    .string()
    .regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be an HTTP header name')
    .transform((name) => name.toLowerCase())
    .optional(),
);

export const redirectorEnv = z.object({
  ...commonEnv,
  REDIRECT_PORT: port(8080),
  /** /metrics and /ready (and /health) for the operator: never on REDIRECT_PORT, which answers redirect routes only. */
  ...adminEnv(9091),
  /** Checked (length) and resolved against $DATA_DIR/secret by resolveSecret. */
  LINKROUTE_SECRET: z.preprocess(emptyAsUndefined, z.string().optional()),
  /**
   * Set only behind a proxy (e.g. `x-forwarded-for`): the client address is then the entry
   * TRUSTED_PROXY_HOPS from the right. Off by default, as any client can send it.
   */
  TRUSTED_IP_HEADER: headerName,
  /**
   * Proxies in front of the redirector that append to TRUSTED_IP_HEADER (nginx
   * `$proxy_add_x_forwarded_for`, a load balancer): the client is the entry this many
   * from the right; entries further left are the client's own writing.
   */
  TRUSTED_PROXY_HOPS: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(32).default(1)),
  /** e.g. `cf-ipcountry`: a valid 2-letter code there overrides geo-IP. Off by default. */
  TRUSTED_COUNTRY_HEADER: headerName,
  /** `?qr=1` marks a QR scan (the API encodes it into QR codes); never forwarded. */
  ...qrMarkerParamEnv,
  /**
   * The largest value one conversion pixel may report, in its currency's units: a pixel
   * asking more still gets its GIF, but no conversion is recorded (counted in
   * linkroute_redirector_pixel_conversions_refused_total). Pixels are public URLs anyone
   * can call with any value, unlike s2s postbacks, which need an API key.
   */
  PIXEL_MAX_VALUE: z.preprocess(emptyAsUndefined, z.coerce.number().positive().max(1_000_000_000_000).default(1_000_000)),
  /** Wrong link passwords per visitor and link per minute before answers are 429. */
  PASSWORD_ATTEMPTS_PER_MINUTE: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(1000).default(5)),
  /**
   * Password checks (scrypt, ~40 ms each on libuv's threadpool, which the process shares)
   * under way at once; a password posted beyond them is a 503 to retry a second later, so
   * a flood of guesses across many links cannot take the pool.
   */
  PASSWORD_CHECKS_IN_FLIGHT: z.preprocess(emptyAsUndefined, z.coerce.number().int().min(1).max(256).default(8)),
})
  .superRefine(checkNatsFields)
  .superRefine(checkAdminPort('REDIRECT_PORT'));

export type RedirectorConfig = z.output<typeof redirectorEnv>;

export function loadRedirectorConfig(env: Record<string, string | undefined> = process.env): RedirectorConfig {
  return parseEnv(redirectorEnv, env);
}
