import type { Context, Next } from 'koa';
import { AppError } from '../../../shared/errors.ts';
import type { Sql } from '../../../shared/db/postgres.ts';
import type { Plan } from '../../../shared/schemas/common.ts';
import type { Principal } from '../../../shared/db/workspaces.ts';
import { errorFields, type Logger } from '../../../shared/logger.ts';

/** Requests per rolling hour by plan (SPEC section 8). */
export const planLimits: Record<Plan, number> = { starter: 100, pro: 1_000, enterprise: 10_000 };

const WINDOW_MS = 3_600_000;

/** How long an instance may hold tokens it took before spending them or giving them back. */
export const TOKEN_LEASE_MS = 1_000;

/** The largest block an instance takes ahead of demand: 1 % of the plan's limit. */
const prefetchCap = (limit: number) => Math.max(1, Math.floor(limit / 100));

export interface RateDecision {
  limit: number;
  remaining: number;
  /** Unix seconds when the oldest counted request leaves the window. */
  reset: number;
  allowed: boolean;
}

interface Grant {
  /** The window before the grant. */
  used: number;
  oldest: number | null;
  granted: number;
}

/**
 * take_rate_tokens() (migration 0011): under the workspace's window row lock, gives
 * back `giveBack` unspent tokens of a block taken at `giveBackAt` and grants up to
 * `want` new ones at `now`, so concurrent calls from any API instance are counted
 * one by one, in one round trip.
 */
async function takeTokens(sql: Sql, workspaceId: string, limit: number, now: number, want: number, giveBack = 0, giveBackAt: number | null = null): Promise<Grant> {
  const [row] = await sql<{ used: number; oldest: Date | null; granted: number }[]>`
    SELECT used, oldest, granted FROM take_rate_tokens(${workspaceId}, ${limit}, ${new Date(now)}, ${want}, ${giveBack},
      ${giveBackAt === null ? null : new Date(giveBackAt)})`;
  return { used: row!.used, oldest: row!.oldest?.getTime() ?? null, granted: row!.granted };
}

const resetOf = (oldest: number | null, now: number) => Math.ceil(((oldest ?? now) + WINDOW_MS) / 1000);

/**
 * One request counted exactly, in its own round trip (the rolling-window test's
 * form; the middleware uses a `RateLimiter`). A refused request is not recorded.
 */
export async function takeRequest(sql: Sql, principal: Principal, now = Date.now()): Promise<RateDecision> {
  const limit = planLimits[principal.plan];
  const grant = await takeTokens(sql, principal.workspaceId, limit, now, 1);
  return { limit, remaining: Math.max(0, limit - grant.used - grant.granted), reset: resetOf(grant.oldest, now), allowed: grant.granted > 0 };
}

interface Block {
  limit: number;
  /** Tokens left to spend. */
  tokens: number;
  /** Epoch ms the block was taken (its tokens count in the window from then). */
  at: number;
  /** The window after the grant: every instance's tokens, spent or not. */
  used: number;
  oldest: number | null;
  spent: number;
}

interface Waiter {
  limit: number;
  resolve(decision: RateDecision): void;
  reject(err: unknown): void;
}

interface WorkspaceTokens {
  block: Block | null;
  waiters: Waiter[];
  claiming: boolean;
}

export interface RateLimiter {
  take(principal: Principal): Promise<RateDecision>;
  /** Gives back every unspent token (at shutdown). */
  close(): Promise<void>;
}

/**
 * The plan's rolling one-hour window per workspace, shared by every API instance
 * through Postgres, without a write per request: an instance takes tokens in blocks
 * (one round trip each) and spends them in memory; concurrent requests on one
 * instance share a round trip. A block is sized to demand (twice what the last
 * block served, at least the requests waiting, at most 1 % of the limit) and shrinks
 * near the limit (take_rate_tokens grants at most an eighth of what is left), so a
 * Starter workspace (100/h) is still counted request by request. Unspent tokens are
 * given back within TOKEN_LEASE_MS to 2 x TOKEN_LEASE_MS.
 *
 * Accuracy, with N instances: the window never admits more than the limit (tokens
 * are taken before they are spent); a token counts from its block's time, at most
 * TOKEN_LEASE_MS before its request, so a request leaves the window that much early.
 * Near the limit a request may be refused while other instances hold unspent tokens:
 * at most N-1 blocks, each at most 1 % of the limit and an eighth of what was left,
 * for at most 2 x TOKEN_LEASE_MS. X-RateLimit-Remaining counts other instances'
 * unspent tokens as used. An instance killed without close() leaves its unspent
 * tokens counted until they leave the window (at most one block per workspace).
 */
export function rateLimiter(sql: Sql, logger: Logger): RateLimiter {
  const workspaces = new Map<string, WorkspaceTokens>();

  const live = (b: Block | null, limit: number, now: number): boolean => b !== null && b.limit === limit && b.tokens > 0 && now - b.at < TOKEN_LEASE_MS;

  function spend(b: Block): RateDecision {
    b.tokens--;
    b.spent++;
    return { limit: b.limit, remaining: Math.max(0, b.limit - b.used + b.tokens), reset: resetOf(b.oldest, b.at), allowed: true };
  }

  /** Takes blocks until every waiter has an answer; one claim at a time per workspace. */
  async function claim(workspaceId: string, w: WorkspaceTokens): Promise<void> {
    w.claiming = true;
    try {
      while (w.waiters.length > 0) {
        const now = Date.now();
        const limit = w.waiters[0]!.limit;
        const old = w.block;
        if (old && live(old, limit, now)) {
          while (w.waiters.length > 0 && w.waiters[0]!.limit === limit && old.tokens > 0) w.waiters.shift()!.resolve(spend(old));
          continue;
        }
        const waiting = w.waiters.filter((x) => x.limit === limit).length;
        const want = Math.max(waiting, Math.min(prefetchCap(limit), 2 * (old?.spent ?? 0)));
        const giveBack = old && old.tokens > 0 ? old : null;
        let grant: Grant;
        try {
          grant = await takeTokens(sql, workspaceId, limit, now, want, giveBack?.tokens ?? 0, giveBack?.at ?? null);
        } catch (err) {
          // The block given back stays ours (the statement did not happen); the waiters fail.
          for (const x of w.waiters.splice(0)) x.reject(err);
          return;
        }
        const block: Block = { limit, tokens: grant.granted, at: now, used: grant.used + grant.granted, oldest: grant.oldest, spent: 0 };
        w.block = block;
        if (grant.granted === 0) {
          const refused: RateDecision = { limit, remaining: 0, reset: resetOf(grant.oldest, now), allowed: false };
          for (let i = w.waiters.length - 1; i >= 0; i--) if (w.waiters[i]!.limit === limit) w.waiters.splice(i, 1)[0]!.resolve(refused);
        }
      }
    } finally {
      w.claiming = false;
    }
  }

  /** Gives back what expired blocks did not spend (all blocks at close), so idle instances strand no tokens. */
  async function giveBackExpired(all = false): Promise<void> {
    const now = Date.now();
    const returns: Array<Promise<unknown>> = [];
    for (const [workspaceId, w] of workspaces) {
      if (w.claiming || w.waiters.length > 0) continue;
      const b = w.block;
      if (b && !all && now - b.at < TOKEN_LEASE_MS) continue;
      // Forgotten here; a request after this starts afresh with a claim of its own.
      workspaces.delete(workspaceId);
      if (b && b.tokens > 0) {
        returns.push(
          takeTokens(sql, workspaceId, b.limit, now, 0, b.tokens, b.at).catch((err) =>
            // The tokens stay counted until they leave the window (the bound above).
            logger.warn('unspent rate-limit tokens not given back', { workspaceId, tokens: b.tokens, ...errorFields(err) }),
          ),
        );
      }
    }
    await Promise.all(returns);
  }

  const timer = setInterval(() => void giveBackExpired(), TOKEN_LEASE_MS);
  timer.unref();

  return {
    take(principal) {
      const limit = planLimits[principal.plan];
      let w = workspaces.get(principal.workspaceId);
      if (!w) workspaces.set(principal.workspaceId, (w = { block: null, waiters: [], claiming: false }));
      if (w.waiters.length === 0 && w.block && live(w.block, limit, Date.now())) return Promise.resolve(spend(w.block));
      const waiters = w.waiters;
      const promise = new Promise<RateDecision>((resolve, reject) => waiters.push({ limit, resolve, reject }));
      if (!w.claiming) void claim(principal.workspaceId, w);
      return promise;
    },
    async close() {
      clearInterval(timer);
      await giveBackExpired(true);
    },
  };
}

/** Sets X-RateLimit-* on the response (also on errors); a refusal is 429 RATE_LIMITED with Retry-After. */
export async function enforceRateLimit(ctx: Context, limiter: RateLimiter, principal: Principal, next: Next): Promise<void> {
  const decision = await limiter.take(principal);
  ctx.set('X-RateLimit-Limit', String(decision.limit));
  ctx.set('X-RateLimit-Remaining', String(decision.remaining));
  ctx.set('X-RateLimit-Reset', String(decision.reset));
  if (!decision.allowed) {
    ctx.set('Retry-After', String(Math.max(1, decision.reset - Math.floor(Date.now() / 1000))));
    throw new AppError('RATE_LIMITED', `Rate limit of ${decision.limit} requests per hour reached for this workspace's ${principal.plan} plan`);
  }
  return next();
}
