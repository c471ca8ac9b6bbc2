import type { Context, Next } from 'koa';
import { AppError } from '../../../shared/errors.ts';
import { looksLikeApiKey } from '../../../shared/auth/api-key.ts';
import { findPrincipalByHash, type Principal } from '../../../shared/db/workspaces.ts';
import type { Sql } from '../../../shared/db/postgres.ts';
import type { Scope } from '../../../shared/schemas/common.ts';
import type { Logger } from '../../../shared/logger.ts';
import { enforceRateLimit, rateLimiter, type RateLimiter } from './rate-limit.ts';
import { idempotency } from './idempotency.ts';
import { API_KEY_CACHE_MS, keyCache } from './key-cache.ts';

export interface AuthState {
  principal: Principal;
}

export interface AuthOptions {
  limiter?: RateLimiter | undefined;
  secret?: Buffer | undefined;
  /** How long a key's lookup is reused (API_KEY_CACHE_MS; key-cache.ts has the bound), and its clock (tests). */
  keyCacheMs?: number | undefined;
  now?: (() => number) | undefined;
  /** How long a running request holds its Idempotency-Key between renewals (API_IDEMPOTENCY_LEASE_SECONDS). */
  idempotencyLeaseSeconds?: number | undefined;
}

/**
 * `Authorization: Bearer <key>`. Missing or unknown/revoked keys are 401 (a key
 * revoked within the last `keyCacheMs` may still pass: key-cache.ts);
 * a valid key without the route's scope is 403 (a null scope admits any valid
 * key). Then, on POST and PATCH, the request's Idempotency-Key (if any) is honoured.
 */
export function authenticator(sql: Sql, logger: Logger, options: AuthOptions = {}) {
  const limiter = options.limiter ?? rateLimiter(sql, logger);
  const keys = keyCache((keyHash) => findPrincipalByHash(sql, keyHash), { ttlMs: options.keyCacheMs ?? API_KEY_CACHE_MS, ...(options.now ? { now: options.now } : {}) });
  const withIdempotency = idempotency(sql, logger, options.secret, { leaseSeconds: options.idempotencyLeaseSeconds });
  return function requireScope(scope: Scope | null) {
    return async function authenticate(ctx: Context, next: Next): Promise<void> {
      const header = ctx.get('authorization');
      if (!header) throw new AppError('UNAUTHORIZED', 'Missing API key: send Authorization: Bearer <key>');
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
      if (!match) throw new AppError('UNAUTHORIZED', 'Malformed Authorization header: expected Bearer <key>');
      const key = match[1]!;
      const principal = looksLikeApiKey(key) ? await keys.principal(key) : null;
      if (!principal) throw new AppError('UNAUTHORIZED', 'Invalid or revoked API key');
      (ctx.state as AuthState).principal = principal;
      // Every authenticated request counts against the workspace's plan, refused ones included.
      return enforceRateLimit(ctx, limiter, principal, async () => {
        if (scope !== null && !principal.scopes.has(scope)) throw new AppError('FORBIDDEN', `This API key lacks the ${scope} scope`);
        return withIdempotency(ctx, principal, next);
      });
    };
  };
}

export type RequireScope = ReturnType<typeof authenticator>;

export function principalOf(ctx: Context): Principal {
  return (ctx.state as AuthState).principal;
}
