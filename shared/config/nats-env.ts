/**
 * How a service reaches NATS: NATS_URL (servers, and optionally credentials and TLS in
 * the URLs), NATS_CREDS (a `.creds` file: JWT and NKey seed) and NATS_TLS_CA (the CA that
 * signed the servers' certificates). Parsed once per service with the rest of its
 * environment (env.ts); the bus connects with the result (shared/bus/nats-connect-options.ts).
 *
 * NATS_URL forms, each also as a comma-separated list of one cluster's seeds:
 *   nats://host:4222               no credentials
 *   nats://user:password@host:4222 user and password (percent-encode reserved characters)
 *   nats://token@host:4222         a token (a user name with no password, as the NATS CLI reads it)
 *   tls://host:4222                TLS required, the server's certificate verified
 * The nats.js client does not read credentials or the scheme from a server URL (it keeps
 * only host and port), so they are taken out here and passed as options; the servers the
 * client learns from the cluster are then reached with the same credentials and TLS.
 */
import { z } from 'zod';

export type NatsAuth = { kind: 'none' } | { kind: 'user'; user: string; pass: string } | { kind: 'token'; token: string };

/** NATS_URL, parsed. */
export interface NatsUrl {
  /** `host:port` of each seed, without scheme or credentials. */
  servers: string[];
  auth: NatsAuth;
  /** Some seed was given as `tls://`: TLS is required. */
  tls: boolean;
  /** The servers as given, credentials replaced by `***`: for logs and errors. */
  redacted: string;
}

/** Everything a connection to NATS needs (see natsTarget). */
export interface NatsTarget extends NatsUrl {
  credsFile?: string;
  tlsCaFile?: string;
}

const SCHEMES = new Set(['nats:', 'tls:']);
const DEFAULT_PORT = '4222';

/**
 * NATS_URL's text, parsed; throws an Error naming the problem (without the credentials)
 * when it is not one of the forms above. Every seed must carry the same credentials (or
 * none: then the others' apply), as the client uses one set for all servers.
 */
export function parseNatsUrl(text: string): NatsUrl {
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  if (entries.length === 0) throw new Error('must name at least one server');
  const servers: string[] = [];
  const redacted: string[] = [];
  let auth: NatsAuth = { kind: 'none' };
  let tls = false;
  for (const [i, entry] of entries.entries()) {
    const url = URL.parse(entry);
    if (url === null || !SCHEMES.has(url.protocol) || url.hostname === '') {
      throw new Error(`server ${i + 1} must be a nats://host:port or tls://host:port URL`);
    }
    if ((url.pathname !== '' && url.pathname !== '/') || url.search !== '' || url.hash !== '') {
      throw new Error(`server ${i + 1} must have no path, query or fragment`);
    }
    tls ||= url.protocol === 'tls:';
    const entryAuth = authOf(url, i);
    if (entryAuth.kind !== 'none') {
      if (auth.kind !== 'none' && !sameAuth(auth, entryAuth)) throw new Error('every server must carry the same credentials');
      auth = entryAuth;
    }
    const hostPort = `${url.hostname}:${url.port || DEFAULT_PORT}`;
    servers.push(hostPort);
    redacted.push(`${url.protocol}//${entryAuth.kind === 'none' ? '' : '***@'}${hostPort}`);
  }
  return { servers, auth, tls, redacted: redacted.join(',') };
}

function authOf(url: URL, index: number): NatsAuth {
  const decode = (part: string, what: string) => {
    try {
      return decodeURIComponent(part);
    } catch (err) {
      if (err instanceof URIError) throw new Error(`server ${index + 1}: the ${what} is not valid percent-encoding`);
      throw err;
    }
  };
  if (url.username === '' && url.password === '') return { kind: 'none' };
  if (url.username === '') throw new Error(`server ${index + 1}: a password needs a user name`);
  const user = decode(url.username, 'user name');
  // `token@host` and `token:@host` read alike: a user with an empty password is not a thing NATS has.
  if (url.password === '') return { kind: 'token', token: user };
  return { kind: 'user', user, pass: decode(url.password, 'password') };
}

function sameAuth(a: NatsAuth, b: NatsAuth): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

const emptyAsUndefined = (v: unknown) => (v === '' ? undefined : v);

/** NATS_URL as a zod field: the parsed URL, or undefined when unset or empty. */
export const natsUrlEnv = z.preprocess(
  emptyAsUndefined,
  z
    .string()
    .transform((text, ctx): NatsUrl => {
      try {
        return parseNatsUrl(text);
      } catch (err) {
        if (!(err instanceof Error)) throw err;
        ctx.addIssue({ code: 'custom', message: err.message });
        return z.NEVER;
      }
    })
    .optional(),
);

/** The NATS fields of every service's environment (spread into commonEnv). */
export const natsEnv = {
  NATS_URL: natsUrlEnv,
  /** A NATS `.creds` file (user JWT and NKey seed, as `nsc` writes it); read at each connect. */
  NATS_CREDS: z.preprocess(emptyAsUndefined, z.string().optional()),
  /** PEM file of the CA that signed the NATS servers' certificates; implies TLS. */
  NATS_TLS_CA: z.preprocess(emptyAsUndefined, z.string().optional()),
};

interface NatsFields {
  NATS_URL?: NatsUrl | undefined;
  NATS_CREDS?: string | undefined;
  NATS_TLS_CA?: string | undefined;
}

/**
 * Checks across the NATS fields, for a service schema's superRefine: a creds file and
 * credentials in the URL would be two identities for one connection, and a creds file or
 * CA without NATS_URL would be ignored silently.
 */
export function checkNatsFields(config: NatsFields, ctx: z.RefinementCtx): void {
  if (config.NATS_URL === undefined) {
    for (const name of ['NATS_CREDS', 'NATS_TLS_CA'] as const) {
      if (config[name] !== undefined) ctx.addIssue({ code: 'custom', path: [name], message: 'needs NATS_URL' });
    }
    return;
  }
  if (config.NATS_CREDS !== undefined && config.NATS_URL.auth.kind !== 'none') {
    ctx.addIssue({ code: 'custom', path: ['NATS_CREDS'], message: 'cannot be combined with credentials in NATS_URL: choose one' });
  }
}

/** The connection a service's config asks for, or undefined without NATS_URL. */
export function natsTarget(config: NatsFields): NatsTarget | undefined {
  if (config.NATS_URL === undefined) return undefined;
  return {
    ...config.NATS_URL,
    ...(config.NATS_CREDS === undefined ? {} : { credsFile: config.NATS_CREDS }),
    ...(config.NATS_TLS_CA === undefined ? {} : { tlsCaFile: config.NATS_TLS_CA }),
  };
}
