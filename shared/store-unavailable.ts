/**
 * Whether an error means a store (Postgres, ClickHouse) could not be reached or cannot
 * serve right now, as opposed to refusing a statement. Such a request is retryable, so
 * the API answers 503 SERVICE_UNAVAILABLE with Retry-After instead of a 500.
 */

/** Socket-level failures, from Node (postgres.js, @clickhouse/client) and undici. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN', 'EPIPE',
  'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * postgres.js's codes for a connection it could not open or lost, and ours for one
 * closed as Postgres stopped answering on it (answer-watch.ts).
 */
const POSTGRES_CONNECTION_CODES = new Set(['CONNECTION_CLOSED', 'CONNECTION_ENDED', 'CONNECTION_DESTROYED', 'CONNECT_TIMEOUT', 'POSTGRES_ANSWER_TIMEOUT']);

/**
 * SQLSTATEs of a server that cannot serve now: class 08 (connection exception),
 * 57P01-57P03 (shutting down, cannot connect now), 53300 (too many connections).
 */
function isUnavailableSqlState(code: string): boolean {
  return /^08[0-9A-Z]{3}$/.test(code) || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300';
}

/** @clickhouse/client reports its request timeout with this message and no code. */
const CLICKHOUSE_TIMEOUT = /^Timeout error\.?$/;

export function isStoreUnavailable(err: unknown): boolean {
  // Follow `cause` (undici wraps socket errors) and AggregateError's members (several addresses tried).
  const seen = new Set<unknown>();
  const pending: unknown[] = [err];
  while (pending.length > 0) {
    const e = pending.pop();
    if (typeof e !== 'object' || e === null || seen.has(e)) continue;
    seen.add(e);
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (NETWORK_CODES.has(code) || POSTGRES_CONNECTION_CODES.has(code) || isUnavailableSqlState(code))) return true;
    if (e instanceof Error && CLICKHOUSE_TIMEOUT.test(e.message)) return true;
    pending.push((e as { cause?: unknown }).cause);
    if (e instanceof AggregateError) pending.push(...e.errors);
  }
  return false;
}
