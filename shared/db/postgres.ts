import postgres from 'postgres';
import { answerWatch, type AnswerWatch } from './answer-watch.ts';

export type Sql = postgres.Sql<Record<string, never>>;

export interface PostgresOptions {
  /** Pool size. The embedded PGlite server executes one statement at a time, so 1 there. */
  max?: number;
  applicationName?: string;
  /**
   * A connection that sent Postgres something and heard nothing back for this long is
   * closed, failing its queries (answer-watch.ts). Unset: queries may wait for ever.
   */
  answerTimeoutMs?: number;
}

/** The watch of each pool opened with answerTimeoutMs, for withoutAnswerTimeout. */
const watches = new WeakMap<Sql, AnswerWatch>();

/**
 * While Postgres is unreachable every query waits for the pool's next connection
 * attempt and then fails (the API answers 503). postgres.js spaces attempts out
 * exponentially up to 20 s, so a request would hang that long and recovery would lag
 * the outage by as much: attempts here are at most a second apart.
 */
const reconnectBackoffSeconds = (retries: number) => Math.min(0.05 * 2 ** retries, 1);
/** A server that does not answer the TCP handshake (blackholed network) fails a request after this long. */
const CONNECT_TIMEOUT_SECONDS = 10;

/**
 * Rows come back camelCased and `sql(object)` helpers take camelCase keys.
 *
 * `url` may name a Unix-socket directory as libpq does, `postgres://user@localhost/db?host=/dir`
 * (the embedded database is served that way); postgres.js does not read that form,
 * so it is turned into its `path` option here.
 */
export function connectPostgres(url: string, options: PostgresOptions = {}): Sql {
  const { url: tcpUrl, path } = unixSocketOf(url);
  const watch = options.answerTimeoutMs === undefined ? undefined : answerWatch(options.answerTimeoutMs);
  const sql = postgres(tcpUrl, {
    ...(path ? { path } : {}),
    ...(watch ? { socket: watch.openSocket } : {}),
    max: options.max ?? 10,
    backoff: reconnectBackoffSeconds,
    connect_timeout: CONNECT_TIMEOUT_SECONDS,
    transform: postgres.camel,
    onnotice: () => {},
    connection: { application_name: options.applicationName ?? 'linkroute' },
  }) as unknown as Sql;
  if (watch) watches.set(sql, watch);
  return sql;
}

/** Runs `work` on `sql` with no answer timeout (the one it was opened with is back after). */
export function withoutAnswerTimeout<T>(sql: Sql, work: () => Promise<T>): Promise<T> {
  const watch = watches.get(sql);
  return watch ? watch.unbounded(work) : work();
}

/** A libpq-style `?host=/socket/dir` turned into postgres.js's socket path; other URLs as they are. */
export function unixSocketOf(url: string): { url: string; path?: string } {
  const u = URL.parse(url);
  if (u === null) return { url };
  const dir = u.searchParams.get('host');
  if (!dir?.startsWith('/')) return { url };
  u.searchParams.delete('host');
  const port = u.port || '5432';
  return { url: u.toString(), path: `${dir}/.s.PGSQL.${port}` };
}

/** SQLSTATE of a unique-constraint violation, used to turn races into 409s. */
export const UNIQUE_VIOLATION = '23505';

export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint_name?: string };
  return e?.code === UNIQUE_VIOLATION && (constraint === undefined || e.constraint_name === constraint);
}

/**
 * SQLSTATEs of a transaction that lost to a concurrent one: deadlock_detected (40P01),
 * serialization_failure (40001). Postgres rolled it back whole, so running it again is
 * safe, and may well succeed.
 */
const CONCURRENCY_FAILURES = new Set(['40P01', '40001']);

export function isConcurrencyFailure(err: unknown): boolean {
  return CONCURRENCY_FAILURES.has((err as { code?: string })?.code ?? '');
}

/**
 * Runs `attempt` (one statement or one transaction, with no effect outside the database)
 * again when it lost to a concurrent transaction, up to `times` in all; then its error goes on.
 */
export async function retryingConcurrencyFailures<T>(attempt: () => Promise<T>, times = 3): Promise<T> {
  for (let run = 1; ; run++) {
    try {
      return await attempt();
    } catch (err) {
      if (!isConcurrencyFailure(err) || run >= times) throw err;
    }
  }
}

/** SQLSTATE lock_not_available: a lock wait ran past the transaction's lock_timeout. */
export const LOCK_NOT_AVAILABLE = '55P03';

export function isLockTimeout(err: unknown): boolean {
  return (err as { code?: string })?.code === LOCK_NOT_AVAILABLE;
}
