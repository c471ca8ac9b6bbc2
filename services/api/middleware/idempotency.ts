import { createHash, randomUUID } from 'node:crypto';
import type { Context, Next } from 'koa';
import { AppError, isAppError } from '../../../shared/errors.ts';
import type { Sql } from '../../../shared/db/postgres.ts';
import { errorFields, type Logger } from '../../../shared/logger.ts';
import { looksSealed, sealedBox } from '../../../shared/sealed-box.ts';
import { bodyOf } from './json-body.ts';

/** How long a key answers with its first response. */
export const IDEMPOTENCY_WINDOW_HOURS = 24;
/**
 * How long a running request holds its key without renewing it: a later request with
 * the key is a 409 until the first has answered; its instance renews the claim every
 * quarter of this while it runs, so only a dead instance's claim lapses (then a retry
 * runs again after at most this long). API_IDEMPOTENCY_LEASE_SECONDS.
 */
export const IDEMPOTENCY_LEASE_SECONDS = 120;
/** Every this many claims, one instance deletes a batch of expired keys. */
const SWEEP_EVERY = 256;
const SWEEP_BATCH = 1_000;

/** The sealing purpose of stored answers; changing it makes the answers stored before unreadable. */
const SEALING_PURPOSE = 'linkroute idempotent responses v1';

/** What an Idempotency-Key may be; the OpenAPI document shows this pattern. */
export const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
const METHODS = new Set(['POST', 'PATCH']);

/**
 * The headers a kept answer is stored and replayed with (lower case): those that
 * describe its body, which a replay repeats byte for byte, so they are the answer's as
 * much as the body is. `X-Linkroute-Counters: unavailable` says a link's zero counters
 * are not counts (ClickHouse could not answer; link-presenter.ts): a replay without it
 * passes them off as counts. Content-Type is always application/json for a kept answer.
 * Not the headers of the exchange, which describe the replay itself and are its own:
 * the rate limit's (the replay counts against it now), Retry-After, Date,
 * Idempotent-Replayed, nor anything a later middleware adds. A route that adds a header
 * describing its body (a Location, a Content-Language) adds it here.
 */
const ANSWER_HEADERS = ['x-linkroute-counters'] as const;

interface StoredKey {
  fingerprint: string;
  responseStatus: number | null;
  responseBody: string | null;
  /** JSON of ANSWER_HEADERS' values the answer had, sealed like the body; null: none (or kept before headers were). */
  responseHeaders: string | null;
}

/** The answer's ANSWER_HEADERS, as JSON text; null when it has none. */
function answerHeadersOf(ctx: Context): string | null {
  const kept: Record<string, string> = {};
  for (const name of ANSWER_HEADERS) {
    // Node's own getHeader: undefined when not set.
    const value: unknown = ctx.response.get(name);
    if (value === undefined || value === '') continue;
    kept[name] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return Object.keys(kept).length > 0 ? JSON.stringify(kept) : null;
}

interface SecretState {
  responseHoldsSecret?: boolean;
}

/**
 * Says the answer being built holds a secret shown once (a webhook's signing secret):
 * without LINKROUTE_SECRET to seal it, it is not stored for replay (a retry with the
 * key runs again) rather than kept in plain text.
 */
export function markResponseHoldsSecret(ctx: Context): void {
  (ctx.state as SecretState).responseHoldsSecret = true;
}

/** JSON with object keys sorted, so `{"a":1,"b":2}` and `{"b":2,"a":1}` are the same request. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  // JSON.parse reads a number too large for a double (1e999) as Infinity, which
  // JSON.stringify writes as null: such a body would pass for one sending null.
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  return JSON.stringify(value) ?? 'null';
}

/** Who sends a request with a key: keys belong to the workspace, answers to the API key that got them. */
export interface IdempotencyCaller {
  workspaceId: string;
  /** The API key's id: part of the request, so another key of the workspace never replays this key's answers. */
  keyId: string;
}

async function fingerprintOf(ctx: Context, caller: IdempotencyCaller): Promise<string> {
  // Bodyless POSTs (e.g. POST /domains/{id}/verify) fingerprint as an empty body.
  const hasBody = Boolean(ctx.request.length) || ctx.get('transfer-encoding') !== '';
  const body = hasBody ? canonicalJson(await bodyOf(ctx)) : '';
  return createHash('sha256').update(`${caller.keyId}\n${ctx.method} ${ctx.path}?${ctx.querystring}\n${body}`).digest('hex');
}

/**
 * Whether an answer is kept for the key (Stripe's rule): an answer the operation
 * gave is; a request that never started is not (400 VALIDATION_ERROR: nothing ran,
 * so a corrected retry with the key runs), nor one that conflicted (409: nothing was
 * done, and the conflict may not last, e.g. an orderId another request is recording,
 * whose error says to retry; a retry runs and meets the state of then), nor a failure
 * of ours (5xx: a retry runs again; SERVICE_UNAVAILABLE promises that nothing was done).
 */
function keepsAnswer(status: number, code?: string): boolean {
  return status < 500 && status !== 409 && code !== 'VALIDATION_ERROR';
}

/**
 * `Idempotency-Key` on POST and PATCH, with Stripe's semantics, exact across API
 * instances (the key is claimed by one INSERT in Postgres):
 * - the first request with a key runs; its answer (status, body and the headers that
 *   describe the body, ANSWER_HEADERS) is stored;
 * - the same key with the same request (API key, method, path, query, JSON body with
 *   keys in any order) within 24 h gets that answer again, `Idempotent-Replayed: true`,
 *   and does nothing;
 * - the same key with a different request is 422 IDEMPOTENCY_KEY_REUSED, also from
 *   another API key of the workspace: an answer may show a secret once (a webhook's
 *   signing secret), and only the API key that got it may see it again;
 * - while the first still runs, 409 IDEMPOTENCY_KEY_IN_USE.
 * Keys belong to the workspace. Runs after authentication, the rate limit and the
 * scope check, so only authorised requests claim keys.
 *
 * Stored answers are sealed (shared/sealed-box.ts, AES-256-GCM under LINKROUTE_SECRET)
 * like webhook signing secrets, because an answer may show a secret once (POST
 * /webhooks): a database dump reads none of them, nor their headers, sealed alike. A
 * replay opens the answer and sends the same bytes with the same ANSWER_HEADERS (none
 * for an answer kept before headers were). Without `secret` (tests of the API alone),
 * answers are kept as they are, except one marked by markResponseHoldsSecret, which is
 * not kept at all. Text that is not sealed (stored by a version before sealing) is
 * replayed as it is.
 * An answer sealed under another LINKROUTE_SECRET does not open: a 500, as every
 * instance must share that secret.
 *
 * Known window: if an instance dies after the operation committed and before its
 * answer was stored, the key is free again after the lease and a retry runs again.
 * A live request renews its claim while it runs, however long (keepClaimed); its answer
 * is stored, or the key let go, only under its own claim (a random token).
 */
export function idempotency(sql: Sql, logger: Logger, secret?: Buffer, options: { leaseSeconds?: number } = {}) {
  const leaseSeconds = options.leaseSeconds ?? IDEMPOTENCY_LEASE_SECONDS;
  let claims = 0;
  const box = secret ? sealedBox(secret, SEALING_PURPOSE) : undefined;
  const sealed = (text: string) => (box ? box.seal(text) : text);
  const opened = (text: string) => (looksSealed(text) && box ? box.open(text) : text);

  async function sweep(): Promise<void> {
    await sql`
      DELETE FROM idempotency_keys WHERE ctid IN (
        SELECT ctid FROM idempotency_keys WHERE expires_at <= now() LIMIT ${SWEEP_BATCH})`;
  }

  /**
   * Claims the key with `token`: true when this request runs; a new claim replaces an
   * expired key or a lapsed claim of the same request.
   */
  async function claim(workspaceId: string, key: string, fingerprint: string, token: string): Promise<boolean> {
    const rows = await sql`
      INSERT INTO idempotency_keys (workspace_id, key, fingerprint, claim_token, locked_until, expires_at)
      VALUES (${workspaceId}, ${key}, ${fingerprint}, ${token}, now() + make_interval(secs => ${leaseSeconds}),
        now() + make_interval(hours => ${IDEMPOTENCY_WINDOW_HOURS}))
      ON CONFLICT (workspace_id, key) DO UPDATE SET
        fingerprint = EXCLUDED.fingerprint, claim_token = EXCLUDED.claim_token, response_status = NULL, response_body = NULL,
        response_headers = NULL, locked_until = EXCLUDED.locked_until, created_at = now(), expires_at = EXCLUDED.expires_at
      WHERE idempotency_keys.expires_at <= now()
        OR (idempotency_keys.response_status IS NULL AND idempotency_keys.locked_until <= now()
            AND idempotency_keys.fingerprint = EXCLUDED.fingerprint)
      RETURNING 1`;
    return rows.length === 1;
  }

  /** Extends the claim `token` holds; false when it no longer holds it (it lapsed and another request took the key). */
  async function renew(workspaceId: string, key: string, token: string): Promise<boolean> {
    const rows = await sql`
      UPDATE idempotency_keys SET locked_until = now() + make_interval(secs => ${leaseSeconds})
      WHERE workspace_id = ${workspaceId} AND key = ${key} AND claim_token = ${token} AND response_status IS NULL
      RETURNING 1`;
    return rows.length === 1;
  }

  /**
   * Renews the claim every quarter of the lease until the returned function is called,
   * so a request slower than the lease (waiting on a lock, a long bulk write) keeps its
   * key: a retry meanwhile is a 409, not a second run.
   */
  function keepClaimed(workspaceId: string, key: string, token: string): () => void {
    let lost = false;
    let stopped = false;
    const timer = setInterval(() => {
      if (lost) return;
      renew(workspaceId, key, token).then(
        (held) => {
          // A renewal answered after the request stored its answer finds no claim: not a lapse.
          if (held || stopped) return;
          lost = true;
          logger.warn('an Idempotency-Key claim lapsed while its request ran (the lease ran out between renewals); a retry may have run it again', { workspaceId, key });
        },
        (err: unknown) => logger.warn('renewing an Idempotency-Key claim failed; retrying at the next renewal', errorFields(err)),
      );
    }, (leaseSeconds * 1000) / 4);
    timer.unref();
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }

  async function store(workspaceId: string, key: string, token: string, status: number, body: string, headers: string | null): Promise<void> {
    await sql`
      UPDATE idempotency_keys SET response_status = ${status}, response_body = ${sealed(body)},
        response_headers = ${headers === null ? null : sealed(headers)}, locked_until = NULL, claim_token = NULL
      WHERE workspace_id = ${workspaceId} AND key = ${key} AND claim_token = ${token} AND response_status IS NULL`;
  }

  async function release(workspaceId: string, key: string, token: string): Promise<void> {
    await sql`
      DELETE FROM idempotency_keys
      WHERE workspace_id = ${workspaceId} AND key = ${key} AND claim_token = ${token} AND response_status IS NULL`;
  }

  return async function withIdempotency(ctx: Context, caller: IdempotencyCaller, next: Next): Promise<void> {
    const { workspaceId } = caller;
    // Present but empty or repeated is a client's mistake to point out, not "no key":
    // a retry it meant to protect would run twice.
    const sent = ctx.req.headersDistinct['idempotency-key'];
    if (!METHODS.has(ctx.method) || sent === undefined) return next();
    const invalid = (message: string) => new AppError('VALIDATION_ERROR', 'Invalid Idempotency-Key', [{ path: '(headers).idempotency-key', message }]);
    if (sent.length > 1) throw invalid(`must be sent once; it came ${sent.length} times`);
    const key = sent[0]!;
    if (!KEY_PATTERN.test(key)) throw invalid('must be 1 to 255 printable ASCII characters without spaces');
    const fingerprint = await fingerprintOf(ctx, caller);
    if (++claims % SWEEP_EVERY === 0) void sweep().catch((err) => logger.warn('idempotency key sweep failed', errorFields(err)));

    const token = randomUUID();
    if (!(await claim(workspaceId, key, fingerprint, token))) {
      const [stored] = await sql<StoredKey[]>`
        SELECT fingerprint, response_status, response_body, response_headers FROM idempotency_keys
        WHERE workspace_id = ${workspaceId} AND key = ${key}`;
      if (!stored) throw new AppError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is in progress; retry shortly');
      if (stored.fingerprint !== fingerprint) {
        throw new AppError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used with a different request; use a new key for a new request');
      }
      if (stored.responseStatus === null) {
        ctx.set('Retry-After', '1');
        throw new AppError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is in progress; retry shortly');
      }
      ctx.status = stored.responseStatus;
      ctx.type = 'application/json';
      ctx.body = opened(stored.responseBody ?? '');
      const headers = stored.responseHeaders === null ? {} : (JSON.parse(opened(stored.responseHeaders)) as Record<string, string>);
      for (const name of ANSWER_HEADERS) if (typeof headers[name] === 'string') ctx.set(name, headers[name]);
      ctx.set('Idempotent-Replayed', 'true');
      return;
    }

    const stopRenewing = keepClaimed(workspaceId, key, token);
    try {
      await next();
    } catch (err) {
      stopRenewing();
      const status = isAppError(err) ? err.status : 500;
      if (isAppError(err) && keepsAnswer(status, err.code)) {
        await store(workspaceId, key, token, status, JSON.stringify({ success: false, error: err.toJSON() }), answerHeadersOf(ctx));
      } else {
        await release(workspaceId, key, token);
      }
      throw err;
    }
    stopRenewing();
    const body = ctx.body;
    const unsealable = !box && (ctx.state as SecretState).responseHoldsSecret === true;
    if (keepsAnswer(ctx.status) && !unsealable && body !== null && typeof body === 'object' && !Buffer.isBuffer(body)) {
      // Stored before the client sees it, so no retry can run the operation again.
      await store(workspaceId, key, token, ctx.status, JSON.stringify(body), answerHeadersOf(ctx)).catch((err) => {
        logger.warn('idempotent answer not stored; the key stays claimed until its lease lapses', errorFields(err));
      });
    } else {
      await release(workspaceId, key, token);
    }
  };
}

export type WithIdempotency = ReturnType<typeof idempotency>;
