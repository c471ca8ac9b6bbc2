import { errorStatus, type ErrorCode } from '../../../shared/errors.ts';
import type { Operation } from './operations.ts';

/**
 * POST and PATCH behind an API key take `Idempotency-Key`: the middleware runs inside
 * every requireScope (middleware/auth.ts), so no such route can miss it.
 */
export function takesIdempotencyKey(op: Pick<Operation, 'method' | 'scope'>): boolean {
  return op.scope !== undefined && (op.method === 'post' || op.method === 'patch');
}

/**
 * The error codes an operation can answer, from what it is:
 * - behind an API key: 401 (no or bad key), 429 (plan limit), 503 (Postgres, which
 *   checks the key, unreachable), and 403 unless any key will do;
 * - an id in the path: 404;
 * - 400, every operation: a URL holding a NUL (%00) is refused before routing
 *   (middleware/reject-nul-in-url.ts), whatever the operation takes; a body: 413;
 * - an Idempotency-Key: 400 (malformed key), 409 (in flight), 422 (reused), and the
 *   body is read to fingerprint the request (400, 413);
 * - and the operation's own `errors` (e.g. 409 short code taken).
 * Never 500 (a bug, not an answer) nor 405 (a property of the path, not of an operation).
 */
export function errorCodesOf(op: Operation): ErrorCode[] {
  const codes = new Set<ErrorCode>();
  if (op.scope !== undefined) {
    codes.add('UNAUTHORIZED');
    if (op.scope !== 'any') codes.add('FORBIDDEN');
    codes.add('RATE_LIMITED');
    codes.add('SERVICE_UNAVAILABLE');
    if (op.path.includes('{')) codes.add('NOT_FOUND');
  }
  codes.add('VALIDATION_ERROR');
  if (op.body) codes.add('PAYLOAD_TOO_LARGE');
  if (takesIdempotencyKey(op)) {
    for (const code of ['PAYLOAD_TOO_LARGE', 'IDEMPOTENCY_KEY_IN_USE', 'IDEMPOTENCY_KEY_REUSED'] as const) codes.add(code);
  }
  for (const code of op.errors ?? []) codes.add(code);
  return [...codes];
}

/** Every status an operation answers, success first, then errors in ascending order. */
export function statusesOf(op: Operation): number[] {
  const errors = [...new Set(errorCodesOf(op).map((code) => errorStatus[code]))].sort((a, b) => a - b);
  return [op.status, ...(op.alsoStatus ? [op.alsoStatus.status] : []), ...errors];
}
