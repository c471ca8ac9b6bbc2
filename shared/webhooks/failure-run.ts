import type { PendingQuery, Row } from 'postgres';
import type { Sql } from '../db/postgres.ts';

/**
 * An endpoint's run of failures (webhook_endpoints.failing_since, from its first failure
 * after a success or a pause) and when it is over: the senders start a new run at a failure
 * after one (services/webhooks/delivery-store.ts), and the API shows an endpoint whose run
 * is over as active (services/api/stores/webhook-store.ts). One definition for both, so
 * the status shown is the one the next failure will find.
 */

/** Six hours at most between tries of a failing delivery (the retry schedule's longest wait). */
export const MAX_RETRY_DELAY_MS = 6 * 3600_000;

/** How long a sender's claim on a delivery lasts unless renewed, with WEBHOOKS_TIMEOUT_MS `timeoutMs`. */
export const claimMsFor = (timeoutMs: number) => 6 * timeoutMs + 2_000;

/**
 * The longest an endpoint whose deliveries keep failing goes from one failed attempt to
 * the next: a failed delivery is due again at most `maxDelayMs` after its attempt ended,
 * and an attempt starts and ends within `claimMs` of its claim (lanes are sized so; one held
 * longer under overload keeps its claim alive, and the gap it makes only starts a new run,
 * erring towards keeping the endpoint). Failures further apart are not one run of
 * failures: the endpoint was not being tried in between.
 */
export const longestFailureGapMs = (policy: { maxDelayMs: number }, claimMs: number) => policy.maxDelayMs + claimMs;

/**
 * The gap with the senders' default settings (a 24 h retry window, 10 s attempts): for the
 * API, which does not know the senders' settings. Senders with a shorter window or
 * timeout end a run sooner; the API then shows it as failing up to this long after its
 * last failure, erring towards showing it.
 */
export const DEFAULT_LONGEST_FAILURE_GAP_MS = longestFailureGapMs({ maxDelayMs: MAX_RETRY_DELAY_MS }, claimMsFor(10_000));

/**
 * SQL: whether a run of failures whose latest failure is `lastFailureAt` (a timestamptz
 * expression; null: not recorded, as for a run open since before migration 0022, which
 * the senders restart at its next failure) is over at `at`: no failure for longer than
 * `gapMs` before it.
 */
export function failureRunOver(sql: Sql, lastFailureAt: PendingQuery<Row[]>, at: PendingQuery<Row[]>, gapMs: number): PendingQuery<Row[]> {
  return sql`(${lastFailureAt} IS NULL OR ${lastFailureAt} < ${at} - make_interval(secs => ${gapMs / 1000}))`;
}
