import { performance } from 'node:perf_hooks';
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
  /** Unix seconds when the oldest counted request leaves the window (the database's clock). */
  reset: number;
  allowed: boolean;
  /** Set on every refusal: seconds until `reset`, counted on the database's clock (Retry-After). */
  retryAfter?: number;
}

interface Grant {
  /** The window before the grant. */
  used: number;
  /** Epoch ms, database time, as `at`. */
  oldest: number | null;
  granted: number;
  /** Epoch ms, database time: when the window ended for this call and the grant counts from. */
  at: number;
}

/**
 * take_rate_tokens() (migrations 0011, 0023): under the workspace's window row lock,
 * gives back `giveBack` unspent tokens of a block taken at `giveBackAt` and grants up
 * to `want` new ones, so concurrent calls from any API instance are counted one by
 * one, in one round trip. `now` null (production) is the database's time; a test
 * may pass its own.
 */
async function takeTokens(sql: Sql, workspaceId: string, limit: number, now: number | null, want: number, giveBack = 0, giveBackAt: number | null = null): Promise<Grant> {
  const date = (ms: number | null) => (ms === null ? null : new Date(ms));
  const [row] = await sql<{ used: number; oldest: Date | null; granted: number; at: Date }[]>`
    SELECT used, oldest, granted, at FROM take_rate_tokens(${workspaceId}, ${limit}, ${date(now)}, ${want}, ${giveBack}, ${date(giveBackAt)})`;
  return { used: row!.used, oldest: row!.oldest?.getTime() ?? null, granted: row!.granted, at: row!.at.getTime() };
}

const resetOf = (oldest: number | null, at: number) => Math.ceil(((oldest ?? at) + WINDOW_MS) / 1000);

/** The answer to the requests a grant was taken for (one each while it lasts; a refusal for all when granted = 0). */
function decide(limit: number, grant: Grant): RateDecision {
  const reset = resetOf(grant.oldest, grant.at);
  if (grant.granted === 0) return { limit, remaining: 0, reset, allowed: false, retryAfter: Math.max(1, reset - Math.floor(grant.at / 1000)) };
  return { limit, remaining: Math.max(0, limit - grant.used - grant.granted), reset, allowed: true };
}

/**
 * One request counted exactly, in its own round trip (the rolling-window test's
 * form; the middleware uses a `RateLimiter`), at `now` (epoch ms) or by default the
 * database's time. A refused request is not recorded.
 */
export async function takeRequest(sql: Sql, principal: Principal, now: number | null = null): Promise<RateDecision> {
  const limit = planLimits[principal.plan];
  return decide(limit, await takeTokens(sql, principal.workspaceId, limit, now, 1));
}

interface Block {
  limit: number;
  /** Tokens left to spend. */
  tokens: number;
  /** Epoch ms, database time, the block was taken (its tokens count in the window from then; given back at it). */
  at: number;
  /** performance.now() when this instance got the block: the lease runs on this instance's monotonic clock. */
  takenAt: number;
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
 * Accuracy, with N instances: the window uses Postgres's clock only. take_rate_tokens
 * stamps blocks, expires hits and answers `oldest` in database time (X-RateLimit-Reset
 * and Retry-After are on it too), and a block is given back at its own database time,
 * so instances' clocks may differ by any amount.
 * The only local time is the lease (how long this instance has held a block), which
 * is elapsed time on a monotonic clock (performance.now()), not a time of day. The
 * window never admits more than the limit (tokens are taken before they are spent);
 * a token counts from its block's time, at most TOKEN_LEASE_MS before its request,
 * so a request leaves the window that much early. A slow store delays answers but
 * loses none: the requests a block was taken for are served from it whenever it comes.
 * Near the limit a request may be refused while other instances hold unspent tokens:
 * at most N-1 blocks, each at most 1 % of the limit and an eighth of what was left,
 * for at most 2 x TOKEN_LEASE_MS. X-RateLimit-Remaining counts other instances'
 * unspent tokens as used. An instance killed without close() leaves its unspent
 * tokens counted until they leave the window (at most one block per workspace), as
 * does a give-back that failed (it may have been applied, so it is never sent again).
 */
export function rateLimiter(sql: Sql, logger: Logger): RateLimiter {
  const workspaces = new Map<string, WorkspaceTokens>();

  const leased = (b: Block) => performance.now() - b.takenAt < TOKEN_LEASE_MS;
  const live = (b: Block, limit: number): boolean => b.limit === limit && b.tokens > 0 && leased(b);

  function spend(b: Block): RateDecision {
    b.tokens--;
    b.spent++;
    return { limit: b.limit, remaining: Math.max(0, b.limit - b.used + b.tokens), reset: resetOf(b.oldest, b.at), allowed: true };
  }

  /**
   * Answers the first `count` waiters of the block's limit from it, in order, while it has tokens;
   * regardless of its lease (the caller's: see claim()).
   */
  function serve(w: WorkspaceTokens, b: Block, count: number): void {
    let kept = 0;
    for (const x of w.waiters) {
      if (count > 0 && x.limit === b.limit && b.tokens > 0) {
        count--;
        x.resolve(spend(b));
      } else {
        w.waiters[kept++] = x;
      }
    }
    w.waiters.length = kept;
  }

  /** Takes blocks until every waiter has an answer; one claim at a time per workspace. */
  async function claim(workspaceId: string, w: WorkspaceTokens): Promise<void> {
    w.claiming = true;
    try {
      while (w.waiters.length > 0) {
        const limit = w.waiters[0]!.limit;
        const old = w.block;
        if (old && live(old, limit)) {
          while (w.waiters.length > 0 && w.waiters[0]!.limit === limit && old.tokens > 0) w.waiters.shift()!.resolve(spend(old));
          continue;
        }
        const waiting = w.waiters.filter((x) => x.limit === limit).length;
        const want = Math.max(waiting, Math.min(prefetchCap(limit), 2 * (old?.spent ?? 0)));
        const giveBack = old && old.tokens > 0 ? old : null;
        const takenAt = performance.now();
        let grant: Grant;
        try {
          grant = await takeTokens(sql, workspaceId, limit, null, want, giveBack?.tokens ?? 0, giveBack?.at ?? null);
        } catch (err) {
          // Whether the call happened is unknown: Postgres commits before it answers, so a connection
          // lost after that (CONNECTION_CLOSED, ECONNRESET) may have given the block back. It is
          // forgotten, never given back again: a give-back is applied at most once, and if this one
          // did not happen its tokens stay counted until they leave the window (as a killed instance's).
          // The waiters fail.
          w.block = null;
          for (const x of w.waiters.splice(0)) x.reject(err);
          return;
        }
        // The lease counts from before the round trip, so a token spent while it lasts is spent within
        // TOKEN_LEASE_MS of its block's database time (which falls during the round trip), whatever this
        // instance's clock says.
        const block: Block = { limit, tokens: grant.granted, at: grant.at, takenAt, used: grant.used + grant.granted, oldest: grant.oldest, spent: 0 };
        w.block = block;
        if (grant.granted === 0) {
          const refused = decide(limit, grant);
          for (let i = w.waiters.length - 1; i >= 0; i--) if (w.waiters[i]!.limit === limit) w.waiters.splice(i, 1)[0]!.resolve(refused);
          continue;
        }
        // The `waiting` requests the block was taken for are served from it however long the round trip
        // took: each was made before the call, so before the block's time, and counting it from then
        // only keeps it in the window longer. Were they left to the lease, a round trip of TOKEN_LEASE_MS
        // or more would bring every block in expired, to be given back and claimed again for good, and
        // they would never be answered. They are the first `waiting` of this limit in the queue (only a
        // claim takes waiters out, one claim at a time, and later ones queue behind), so each round trip
        // answers at least one; the tokens left serve requests come meanwhile only while the lease lasts
        // (the loop), and are given back after it.
        serve(w, block, waiting);
      }
    } finally {
      w.claiming = false;
    }
  }

  /** Gives back what expired blocks did not spend (all blocks at close), so idle instances strand no tokens. */
  async function giveBackExpired(all = false): Promise<void> {
    const returns: Array<Promise<unknown>> = [];
    for (const [workspaceId, w] of workspaces) {
      if (w.claiming || w.waiters.length > 0) continue;
      const b = w.block;
      if (b && !all && leased(b)) continue;
      // Forgotten here; a request after this starts afresh with a claim of its own.
      workspaces.delete(workspaceId);
      if (b && b.tokens > 0) {
        returns.push(
          takeTokens(sql, workspaceId, b.limit, null, 0, b.tokens, b.at).catch((err) =>
            // Not sent again (it may have been applied, its reply lost): if it was not, the tokens
            // stay counted until they leave the window (the bound above).
            logger.warn('unspent rate-limit tokens maybe not given back', { workspaceId, tokens: b.tokens, ...errorFields(err) }),
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
      if (w.waiters.length === 0 && w.block && live(w.block, limit)) return Promise.resolve(spend(w.block));
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
    ctx.set('Retry-After', String(decision.retryAfter ?? 1));
    throw new AppError('RATE_LIMITED', `Rate limit of ${decision.limit} requests per hour reached for this workspace's ${principal.plan} plan`);
  }
  return next();
}
