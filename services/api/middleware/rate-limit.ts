import type { Context, Next } from 'koa';
import { AppError } from '../../../shared/errors.ts';
import type { Sql } from '../../../shared/db/postgres.ts';
import type { Plan } from '../../../shared/schemas/common.ts';
import type { Principal } from '../../../shared/db/workspaces.ts';

/** Requests per rolling hour by plan (SPEC section 8). */
export const planLimits: Record<Plan, number> = { starter: 100, pro: 1_000, enterprise: 10_000 };

const WINDOW_MS = 3_600_000;

export interface RateDecision {
  limit: number;
  remaining: number;
  /** Unix seconds when the oldest counted request leaves the window. */
  reset: number;
  allowed: boolean;
}

/**
 * An exact rolling one-hour window per workspace, shared by every API instance:
 * take_rate_limit() (migration 0007) counts and records the request under the
 * workspace's window row lock, so concurrent requests on any instance are counted
 * one by one, in one round trip. A refused request is not recorded.
 */
export async function takeRequest(sql: Sql, principal: Principal, now = Date.now()): Promise<RateDecision> {
  const limit = planLimits[principal.plan];
  const [window] = await sql<{ used: number; oldest: Date | null; allowed: boolean }[]>`
    SELECT used, oldest, allowed FROM take_rate_limit(${principal.workspaceId}, ${limit}, ${new Date(now)})`;
  const { used, allowed } = window!;
  const oldest = window!.oldest?.getTime() ?? now;
  return {
    limit,
    remaining: Math.max(0, limit - used - (allowed ? 1 : 0)),
    reset: Math.ceil((oldest + WINDOW_MS) / 1000),
    allowed,
  };
}

/** Sets X-RateLimit-* on the response (also on errors); a refusal is 429 RATE_LIMITED with Retry-After. */
export async function enforceRateLimit(ctx: Context, sql: Sql, principal: Principal, next: Next): Promise<void> {
  const decision = await takeRequest(sql, principal);
  ctx.set('X-RateLimit-Limit', String(decision.limit));
  ctx.set('X-RateLimit-Remaining', String(decision.remaining));
  ctx.set('X-RateLimit-Reset', String(decision.reset));
  if (!decision.allowed) {
    ctx.set('Retry-After', String(Math.max(1, decision.reset - Math.floor(Date.now() / 1000))));
    throw new AppError('RATE_LIMITED', `Rate limit of ${decision.limit} requests per hour reached for this workspace's ${principal.plan} plan`);
  }
  return next();
}
