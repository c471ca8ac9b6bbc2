import { retryingConcurrencyFailures, type Sql } from '../../shared/db/postgres.ts';
import type { WebhookBusEvent } from '../../shared/schemas/webhook.ts';
import { failureRunOver } from '../../shared/webhooks/failure-run.ts';
import type { FirstAttempt } from './first-attempt.ts';
import { longestFailureGapMs, type RetryPolicy } from './retry-schedule.ts';

/** A delivery this sender has taken: it alone attempts it while its claim lasts (claims-in-hand.ts keeps it). */
export interface ClaimedDelivery {
  id: string;
  endpointId: string;
  eventId: string;
  body: string;
  /**
   * The claim: the random token this sender's claim wrote on the row (claim_token). Its
   * renewals keep it, so it identifies the claim however often it is renewed, and whether
   * or not a renewal's answer came back; another sender taking the delivery up writes its
   * own. Absent while the delivery is not stored yet (`first`): its insert sets it.
   */
  claimToken?: string;
  /** Attempts made before this one. */
  attempts: number;
  /** Epoch ms of the first attempt; null before it. */
  firstAttemptAt: number | null;
  /** Set while the delivery is not stored yet: its first attempt's outcome goes into its insert. */
  first?: FirstAttempt;
}

/** A delivery the fan-out stores: `outcome`, its first attempt's, when that came before the insert. */
export interface NewDelivery {
  id: string;
  eventId: string;
  endpointId: string;
  eventType: string;
  /** Taken by this sender (attempted here); else due at once for any sender. */
  claim: boolean;
  outcome?: AttemptResult;
}

export interface AttemptResult {
  deliveryId: string;
  endpointId: string;
  at: number;
  ok: boolean;
  status: number | null;
  latencyMs: number;
  error: string | null;
  /** Epoch ms of the next attempt; null: none (succeeded, or given up). */
  nextAttemptAt: number | null;
  /**
   * The token of the claim the attempt was made under (ClaimedDelivery.claimToken; for a
   * first attempt stored without its outcome, the token its insert set). Absent: made under
   * no claim this sender knows. The outcome decides the schedule only while the row still
   * carries it (recordAttempts): never under a claim made after the attempt, even by this
   * sender. Unused when `stored`.
   */
  claimToken?: string;
  /**
   * No row to update: the delivery was inserted holding this outcome (a first attempt), or
   * its insert failed and the bus hands its event out again. Only the endpoint's streak is
   * left to record.
   */
  stored?: boolean;
}

interface DeliveryRow {
  id: string;
  endpointId: string;
  eventId: string;
  body: string;
  attempts: number;
  firstAttemptAt: Date | null;
  claimToken: string;
}

/** What a renewal of claims found (DeliveryStore.renewClaims). */
export interface RenewedClaims {
  /** Deliveries claimed for another claimMs (their token unchanged). */
  renewed: string[];
  /** No longer this sender's (the row no longer pending with its token): taken up by another sender once the claim ran out, finished, or handed back. */
  lost: string[];
}

/** A click an endpoint's link.clicked event holds. */
export interface SentClick {
  endpointId: string;
  clickId: string;
}

export const sentClickKey = (c: SentClick) => `${c.endpointId}\n${c.clickId}`;

// Arrays travel as text (postgres.js types a parameter by its first element, and a
// boolean, a null or a number there would not make the array wanted).
const text = (values: Array<string | number | boolean | null>) => values.map((v) => (v === null ? null : String(v)));
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

const toClaimed = (r: DeliveryRow): ClaimedDelivery => ({ ...r, firstAttemptAt: r.firstAttemptAt?.getTime() ?? null });

/** An endpoint's attempts in one batch: the latest's outcome, and the failures after its last success. */
interface Streak {
  ok: boolean;
  /** A success came before the failures (when `ok` is false). */
  succeeded: boolean;
  /** Epoch ms of the first failure after the last success, and of the latest attempt. */
  first: number;
  last: number;
}

/**
 * How far an endpoint's last_failure_at may lag its last failure (at most half the
 * longest gap, so no pause hides in it): a steadily failing endpoint's row is then
 * written about once a second, not at every batch (every 25 ms) of every sender.
 */
const LAST_FAILURE_STEP_MS = 1_000;

/**
 * recordAttempts failed after its deliveries' statement committed (the endpoints' streaks
 * are not recorded): the batch is to be recorded again as `stored`, so that its attempts
 * are not counted twice.
 */
export class AttemptsPartlyRecorded extends Error {
  constructor(cause: unknown) {
    super(`webhook attempts recorded, their endpoints' failure streaks not: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'AttemptsPartlyRecorded';
  }
}

/**
 * Webhook events and deliveries in Postgres, shared by every sender. A delivery is
 * `pending` until it succeeds or is given up; a sender claims one by pushing its
 * next_attempt_at past the time the attempt may take (`claimMs`), and renews the claim
 * for as long as it holds the delivery (renewClaims), so a sender that dies leaves it
 * due again for the others one claim after its last renewal.
 *
 * A claim is identified by a random token (claim_token, migration 0024) that each claim
 * writes on the row (claimDue; record for a delivery inserted claimed) and that its
 * renewals keep; an outcome of the claim and a hand-back clear it, as does `abandon`.
 * Invariants: a pending row with a token is claimed by the sender holding that token (a
 * fresh one per claim: a sender taking up a delivery whose claim ran out replaces the
 * token of the one that stalled); a finished row carries none. A sender moves a pending
 * delivery's schedule (status, next_attempt_at) only while the row carries the token it
 * holds (renewClaims, release; for an outcome, the token of the claim its attempt was
 * made under: recordAttempts), but for `abandon`, which gives up the deliveries of a
 * disabled or deleted endpoint whoever holds them (every sender would).
 * A sender that stalled past its claim may find the delivery taken up by another, which
 * sends it again: from then on only the taker decides when it is due and when it is done.
 * As a renewal leaves the token as it is, one that committed but whose answer was lost (a
 * connection reset) changes nothing this sender holds: its outcome still decides.
 *
 * Rolling upgrade: senders of the previous release set no token and match their claims by
 * next_attempt_at. Their claims carry no token (rows they claim were due: none holds a
 * token of this release but one whose holder stalled past its claim, below), which no
 * sender here takes for its own, and a claim or renewal here moves next_attempt_at, so
 * they find claims taken up here not theirs, as before. What a mixed fleet can still do:
 * an old sender taking up a delivery whose claim by a new sender ran out (a stall of a
 * whole claim) leaves that sender's token on the row, so the stalled sender still finds
 * the delivery its own. Its renewals do not extend the old sender's claim, they take the
 * delivery back: each moves next_attempt_at, so the old sender's claim, matched by that
 * time, no longer matches, and the old sender treats the delivery as lost (drops it if
 * still queued; only counts its outcome if its attempt was under way). Both may have POSTed
 * it by then, and the stalled sender's outcome decides the schedule (the behaviour before
 * commit 62ceebc). A row an old sender finishes (its outcome clears no token) keeps the
 * token on it. This ends with the last old sender: from then on the invariants above hold
 * for every row written, but finished rows an older sender left carrying a token keep it
 * until the retention cleanup (`sweep`) deletes them.
 */
export function deliveryStore(sql: Sql, claimMs: number) {
  const claimInterval = sql`make_interval(secs => ${claimMs / 1000})`;

  /** The endpoints' failure streaks for a batch of attempts (recordAttempts); returns the endpoints disabled. */
  async function recordStreaks(results: readonly AttemptResult[], retry: Pick<RetryPolicy, 'maxDelayMs' | 'windowMs'>): Promise<string[]> {
    // The latest attempt per endpoint decides its streak; the batch's failures after its
    // last success there are where a streak starts or goes on.
    const streaks = new Map<string, Streak>();
    for (const r of [...results].sort((a, b) => a.at - b.at)) {
      const s = streaks.get(r.endpointId);
      if (!s) {
        streaks.set(r.endpointId, { ok: r.ok, succeeded: r.ok, first: r.at, last: r.at });
        continue;
      }
      if (!r.ok && s.ok) s.first = r.at;
      s.succeeded ||= r.ok;
      s.ok = r.ok;
      s.last = r.at;
    }
    // Endpoint rows are taken in id order by every sender, and a statement that still
    // lost to another's (a deadlock, rolled back whole) runs again here rather than have
    // the dispatcher record the batch's streaks again, half a second later.
    const byEndpoint = [...streaks].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const ok = byEndpoint.filter(([, s]) => s.ok).map(([id]) => id);
    const failing = byEndpoint.filter(([, s]) => !s.ok);
    if (ok.length > 0) {
      await retryingConcurrencyFailures(() => sql`
        UPDATE webhook_endpoints SET failing_since = NULL
        WHERE id IN (SELECT id FROM webhook_endpoints WHERE id = ANY(${ok}) AND failing_since IS NOT NULL ORDER BY id FOR UPDATE)`);
    }
    if (failing.length === 0) return [];
    const ids = failing.map(([id]) => id);
    const gapMs = longestFailureGapMs(retry, claimMs);
    const stepMs = Math.min(LAST_FAILURE_STEP_MS, gapMs / 2);
    // failing_since alone cannot tell a run of failures from one left open: a manual
    // retry of a delivery past its window failing once, then no delivery for a day,
    // and a 502 in a deploy would find it past the window. So a streak restarts at the
    // batch's first failure after a pause the schedule never makes, after a success,
    // or when no failure has carried it on since migration 0022 (nor in a rolling
    // upgrade's older senders): erring towards keeping the endpoint. Rows are written
    // once last_failure_at is a step behind, not by every batch of every sender.
    await retryingConcurrencyFailures(() => sql`
      UPDATE webhook_endpoints e SET
        failing_since = CASE
          WHEN e.failing_since IS NULL OR f.succeeded::boolean
            OR ${failureRunOver(sql, sql`e.last_failure_at`, sql`f.first::timestamptz`, gapMs)} THEN f.first::timestamptz
          ELSE e.failing_since END,
        last_failure_at = greatest(e.last_failure_at, f.last::timestamptz)
      FROM unnest(${ids}::text[], ${failing.map(([, s]) => iso(s.first))}::text[], ${failing.map(([, s]) => iso(s.last))}::text[],
        ${failing.map(([, s]) => String(s.succeeded))}::text[]) AS f(id, first, last, succeeded)
      WHERE e.id = f.id AND e.enabled
        AND (e.failing_since IS NULL OR f.succeeded::boolean OR e.last_failure_at IS NULL
          OR e.last_failure_at < f.last::timestamptz - make_interval(secs => ${stepMs / 1000}))`);
    const disabled = await retryingConcurrencyFailures(() => sql<{ id: string }[]>`
      UPDATE webhook_endpoints SET enabled = false, disabled_reason = 'failing', updated_at = now()
      WHERE id IN (SELECT id FROM webhook_endpoints
        WHERE id = ANY(${ids}) AND enabled AND failing_since <= now() - make_interval(secs => ${retry.windowMs / 1000}) ORDER BY id FOR UPDATE)
      RETURNING id`);
    return disabled.map((d) => d.id);
  }

  return {
    /** How long a claim lasts unless renewed: how long a dead sender's deliveries wait for the others. */
    claimMs,

    /**
     * Stores the events and a delivery per (event, endpoint), both once whatever the
     * redeliveries, each delivery with its first attempt's outcome when it has one.
     * Deliveries `claim`ed without an outcome are this sender's (running, or about to
     * run here); unclaimed ones are due now for any sender. Returns the claimed ones
     * without an outcome this call created.
     */
    async record(events: readonly WebhookBusEvent[], deliveries: readonly NewDelivery[], sentClicks: readonly SentClick[] = []): Promise<ClaimedDelivery[]> {
      if (deliveries.length === 0) return [];
      const used = new Set(deliveries.map((d) => d.eventId));
      const stored = events.filter((e) => used.has(e.id));
      const bodies = new Map(stored.map((e) => [e.id, e.body]));
      const outcome = <T>(pick: (o: AttemptResult) => T) => deliveries.map((d) => (d.outcome ? pick(d.outcome) : null));
      // One statement, so atomic without a transaction's extra round trips: the deliveries'
      // foreign key to their event is checked at its end, after the events' insert.
      const rows = await sql<Array<Pick<DeliveryRow, 'id' | 'endpointId' | 'eventId' | 'claimToken'>>>`
        WITH e AS (
          INSERT INTO webhook_events (id, workspace_id, type, body)
          SELECT * FROM unnest(${stored.map((e) => e.id)}::text[], ${stored.map((e) => e.workspaceId)}::text[],
            ${stored.map((e) => e.type)}::text[], ${stored.map((e) => e.body)}::text[])
          ON CONFLICT (id) DO NOTHING
        ), sent AS (
          INSERT INTO webhook_sent_clicks (endpoint_id, click_id)
          SELECT * FROM unnest(${sentClicks.map((c) => c.endpointId)}::text[], ${sentClicks.map((c) => c.clickId)}::text[])
          ON CONFLICT DO NOTHING
        ), d AS (
          INSERT INTO webhook_deliveries (id, endpoint_id, event_id, event_type, status, attempts, response_status, latency_ms, error,
            next_attempt_at, first_attempt_at, last_attempt_at, claim_token)
          SELECT id, endpoint_id, event_id, event_type,
            CASE WHEN at IS NULL THEN 'pending' WHEN ok::boolean THEN 'succeeded' WHEN next IS NULL THEN 'failed' ELSE 'pending' END,
            CASE WHEN at IS NULL THEN 0 ELSE 1 END, code::int, latency::int, error,
            CASE WHEN at IS NOT NULL THEN next::timestamptz WHEN claim::boolean THEN now() + ${claimInterval} ELSE now() END,
            at::timestamptz, at::timestamptz,
            -- Claimed without an outcome: this sender's claim, its attempt under way.
            CASE WHEN at IS NULL AND claim::boolean THEN gen_random_uuid()::text END
          FROM unnest(${deliveries.map((d) => d.id)}::text[], ${deliveries.map((d) => d.endpointId)}::text[],
            ${deliveries.map((d) => d.eventId)}::text[], ${deliveries.map((d) => d.eventType)}::text[],
            ${deliveries.map((d) => String(d.claim))}::text[], ${text(outcome((o) => o.ok))}::text[], ${text(outcome((o) => o.status))}::text[],
            ${text(outcome((o) => o.latencyMs))}::text[], ${outcome((o) => o.error)}::text[], ${outcome((o) => iso(o.nextAttemptAt))}::text[],
            ${outcome((o) => iso(o.at))}::text[]) AS n(id, endpoint_id, event_id, event_type, claim, ok, code, latency, error, next, at)
          ON CONFLICT (endpoint_id, event_id) DO NOTHING
          RETURNING id, endpoint_id, event_id, claim_token
        )
        SELECT d.id, d.endpoint_id, d.event_id, d.claim_token FROM d WHERE d.claim_token IS NOT NULL`;
      // The bodies are the events' in hand (an event's id names one body): not read back,
      // as each would come once per endpoint.
      return rows.map((r) => ({ ...r, body: bodies.get(r.eventId)!, attempts: 0, firstAttemptAt: null }));
    },

    /** Of these (endpoint, click) pairs, those an earlier link.clicked event holds (recorded with it). */
    async sentClicks(pairs: readonly SentClick[]): Promise<Set<string>> {
      if (pairs.length === 0) return new Set();
      const rows = await sql<SentClick[]>`
        SELECT endpoint_id, click_id FROM webhook_sent_clicks
        WHERE (endpoint_id, click_id) IN (SELECT * FROM unnest(${pairs.map((p) => p.endpointId)}::text[], ${pairs.map((p) => p.clickId)}::text[]))`;
      return new Set(rows.map(sentClickKey));
    },

    /**
     * Claims up to `limit` due deliveries, oldest due first, taking of each endpoint only
     * its own oldest due ones up to its `room` (endpoints not in it: `defaultRoom`, the
     * most any has), so none is claimed to wait long behind a full lane here (its claim
     * would be kept alive, but another sender may have room for it now); and stopping once
     * their bodies reach `maxBytes` (always at least one).
     *
     * Each endpoint is cut to its room before the batch is: cut after (the `limit` oldest
     * due of all endpoints, then each one's room), a slow endpoint with a backlog of more
     * than `limit` due deliveries filled every batch of every sender, and no other
     * endpoint's due delivery was reached until that backlog was gone. Index-driven (0028):
     * the endpoints with pending deliveries, one index descent each (a loose scan), and each
     * one's oldest due time; of the `limit` endpoints due longest (no other can have a
     * delivery in the batch: each of those has an older one), the due ones up to the
     * `limit`-th of those times (the batch's newest cannot be newer), at most the
     * largest room each; then each endpoint's room, then the batch. It reads about one
     * index entry per endpoint with pending deliveries, and rows near the batch's size.
     */
    async claimDue(limit: number, room: ReadonlyMap<string, number>, defaultRoom: number, maxBytes = Infinity): Promise<ClaimedDelivery[]> {
      if (limit <= 0 || maxBytes <= 0) return [];
      const rooms = [...room];
      const roomOf = sql`coalesce(r.room, ${defaultRoom})`;
      const mostRoom = Math.max(defaultRoom, ...rooms.map(([, n]) => n));
      // The per-endpoint LIMIT is a parameter, not each endpoint's room: a LIMIT the planner
      // cannot read is estimated at a tenth of the rows, which at 100k pending deliveries
      // made the plan costly enough for JIT compiling (20 ms more per claim).
      // octet_length reads a stored body's size without decompressing it.
      const rows = await sql<DeliveryRow[]>`
        WITH RECURSIVE endpoints AS (
          (SELECT endpoint_id FROM webhook_deliveries WHERE status = 'pending' ORDER BY endpoint_id LIMIT 1)
          UNION ALL
          SELECT (SELECT d.endpoint_id FROM webhook_deliveries d
            WHERE d.status = 'pending' AND d.endpoint_id > endpoints.endpoint_id ORDER BY d.endpoint_id LIMIT 1)
          FROM endpoints WHERE endpoints.endpoint_id IS NOT NULL
        ), heads AS (
          SELECT endpoints.endpoint_id, ${roomOf} AS room, h.next_attempt_at AS head FROM endpoints
          LEFT JOIN unnest(${rooms.map(([id]) => id)}::text[], ${rooms.map(([, n]) => n)}::int[]) AS r(endpoint_id, room)
            ON r.endpoint_id = endpoints.endpoint_id
          CROSS JOIN LATERAL (
            SELECT d.next_attempt_at FROM webhook_deliveries d
            WHERE d.endpoint_id = endpoints.endpoint_id AND d.status = 'pending' AND d.next_attempt_at <= now()
            ORDER BY d.next_attempt_at LIMIT 1) h
          WHERE endpoints.endpoint_id IS NOT NULL AND ${roomOf} > 0
          ORDER BY h.next_attempt_at LIMIT ${limit}
        ), bound AS (
          SELECT CASE WHEN count(*) >= ${limit} THEN max(head) ELSE now() END AS until FROM heads
        ), candidates AS (
          SELECT c.*, heads.room FROM heads CROSS JOIN bound CROSS JOIN LATERAL (
            SELECT d.id, d.endpoint_id, d.event_id, d.next_attempt_at FROM webhook_deliveries d
            WHERE d.endpoint_id = heads.endpoint_id AND d.status = 'pending' AND d.next_attempt_at <= least(now(), bound.until)
            ORDER BY d.next_attempt_at LIMIT ${mostRoom} FOR UPDATE SKIP LOCKED) c
        ), due AS (
          SELECT id, event_id, next_attempt_at FROM (
            SELECT candidates.*, row_number() OVER (PARTITION BY endpoint_id ORDER BY next_attempt_at, id) AS nth FROM candidates) ranked
          WHERE nth <= room
          ORDER BY next_attempt_at, id LIMIT ${limit}
        ), sized AS (
          SELECT due.id, sum(octet_length(e.body)) OVER (ORDER BY due.next_attempt_at, due.id) - octet_length(e.body) AS bytes_before
          FROM due JOIN webhook_events e ON e.id = due.event_id
        ), taken AS (
          UPDATE webhook_deliveries d SET next_attempt_at = now() + ${claimInterval}, claim_token = gen_random_uuid()::text
          FROM sized WHERE d.id = sized.id
            AND sized.bytes_before < ${Number.isFinite(maxBytes) ? maxBytes : Number.MAX_SAFE_INTEGER}
          RETURNING d.id, d.endpoint_id, d.event_id, d.attempts, d.first_attempt_at, d.claim_token
        )
        SELECT taken.*, e.body FROM taken JOIN webhook_events e ON e.id = taken.event_id`;
      return rows.map(toClaimed);
    },

    /**
     * Renews claims this sender holds (delivery id -> its claim's token): each delivery
     * still pending and still carrying that token is claimed for another claimMs from now,
     * on Postgres's clock, its token kept, so no row another sender took over (another
     * token, or none: a sender of the previous release), nor one whose outcome is recorded
     * or that was handed back (none), is touched. Keeping the token, a renewal leaves what
     * identifies the claim as it was: one that committed but whose answer was lost changes
     * nothing the sender holds. A row another transaction has locked at that moment (this
     * sender recording its outcome, say) is neither renewed nor lost: it is tried again at
     * the next renewal. Never waiting for a lock, a renewal cannot deadlock with the writes
     * it overlaps.
     */
    async renewClaims(claims: ReadonlyMap<string, string>): Promise<RenewedClaims> {
      if (claims.size === 0) return { renewed: [], lost: [] };
      // `ours` reads the statement's snapshot without locking: what the locking read skipped.
      const rows = await sql<Array<{ id: string; renewed: boolean; ours: boolean }>>`
        WITH held AS (
          SELECT * FROM unnest(${[...claims.keys()]}::text[], ${[...claims.values()]}::text[]) AS h(id, token)
        ), ours AS (
          SELECT d.id FROM webhook_deliveries d JOIN held ON held.id = d.id
          WHERE d.status = 'pending' AND d.claim_token = held.token
        ), unlocked AS (
          SELECT d.id FROM webhook_deliveries d JOIN held ON held.id = d.id
          WHERE d.status = 'pending' AND d.claim_token = held.token
          FOR UPDATE OF d SKIP LOCKED
        ), renewed AS (
          UPDATE webhook_deliveries d SET next_attempt_at = now() + ${claimInterval}
          FROM unlocked WHERE d.id = unlocked.id
          RETURNING d.id
        )
        SELECT held.id, renewed.id IS NOT NULL AS renewed, ours.id IS NOT NULL AS ours
        FROM held LEFT JOIN ours ON ours.id = held.id LEFT JOIN renewed ON renewed.id = held.id`;
      return { renewed: rows.filter((r) => r.renewed).map((r) => r.id), lost: rows.filter((r) => !r.ours).map((r) => r.id) };
    },

    /**
     * Due again at once, unclaimed (no token): deliveries this sender claimed and will not
     * attempt after all (delivery id -> its claim's token, as for renewClaims). One no
     * longer carrying that token was taken up by another sender (this one stalled past its
     * claim): left as it is.
     */
    async release(claims: ReadonlyMap<string, string>): Promise<void> {
      if (claims.size === 0) return;
      await sql`
        UPDATE webhook_deliveries d SET next_attempt_at = now(), claim_token = NULL
        FROM unnest(${[...claims.keys()]}::text[], ${[...claims.values()]}::text[]) AS h(id, token)
        WHERE d.id = h.id AND d.status = 'pending' AND d.claim_token = h.token`;
    },

    /**
     * Records attempts in one statement each for deliveries (those not inserted holding
     * their outcome) and endpoints: a success ends the endpoint's failure streak, a
     * failure starts one or continues it, and an endpoint failing for the retry window is
     * disabled. A streak goes on only while failures follow each other closer than the
     * longest wait of the retry schedule (longestFailureGapMs): after a longer pause a
     * failure starts a new one. Returns the endpoints it disabled.
     *
     * An outcome decides its delivery's schedule (status, next_attempt_at) only while the
     * row is pending and carries the token of the claim its attempt was made under
     * (AttemptResult.claimToken: `ours`), and then clears the token: the claim is spent (a
     * retry is claimed afresh). Past it, a newer claim holds the delivery: another sender
     * took it up and is sending it (this one stalled a whole claim), or this sender claimed
     * its retry after the outcome was first written (below). A failure's retry time
     * written now would make it due again within seconds, a third POST, and the newer
     * claim's outcome would no longer find its token on the row. Yet this attempt was made
     * (the endpoint got it), so it is counted, its time can be the first attempt's (the
     * retry window runs from the earliest POST), and while the delivery is pending its
     * answer shows unless a later attempt's is recorded (a given-up delivery keeps the
     * reason it was given up).
     * The endpoint's streak takes it as any other: the endpoint did answer so.
     *
     * Written twice: the deliveries' statement is the first; when a later one (the
     * endpoints') fails, this throws AttemptsPartlyRecorded, and the caller records the
     * batch again as `stored` (streaks only), so no attempt, ours or stale, is counted
     * twice that way. Left: the deliveries' statement committed but its answer was lost.
     * Its attempts written again carry the tokens they were made under, which the first
     * write spent (cleared): however often the delivery was claimed since, by this sender
     * or another, none of them decides a schedule again. One the row shows as its latest
     * attempt (the same time) is not counted again, but a stale one the row does not show
     * so (a later attempt is recorded) is counted twice. A token names the claim, not
     * whether its attempt was recorded (a stale attempt cannot leave a mark on a row whose
     * token is the taker's), so it cannot tell that case apart either.
     */
    async recordAttempts(results: readonly AttemptResult[], retry: Pick<RetryPolicy, 'maxDelayMs' | 'windowMs'>): Promise<string[]> {
      if (results.length === 0) return [];
      const updates = results.filter((r) => !r.stored);
      // Repeated below: a statement's SET cannot name a column it computes, and each
      // expression reads the row as the update finds it (after waiting for another's lock,
      // such as a renewal's, which leaves the token as it is).
      // False, not null, for an attempt made under no claim known here or a row with no
      // token (unclaimed, or an old sender's claim): `NOT ours` must hold then.
      const ours = sql`(d.status = 'pending' AND coalesce(d.claim_token = r.token, false))`;
      const latest = sql`(${ours} OR (d.status = 'pending' AND (d.last_attempt_at IS NULL OR d.last_attempt_at < r.at::timestamptz)))`;
      if (updates.length > 0) await sql`
        UPDATE webhook_deliveries d SET
          status = CASE WHEN NOT ${ours} THEN d.status WHEN r.ok::boolean THEN 'succeeded' WHEN r.next IS NULL THEN 'failed' ELSE 'pending' END,
          next_attempt_at = CASE WHEN ${ours} THEN r.next::timestamptz ELSE d.next_attempt_at END,
          claim_token = CASE WHEN ${ours} THEN NULL ELSE d.claim_token END,
          attempts = d.attempts + 1,
          response_status = CASE WHEN ${latest} THEN r.status::int ELSE d.response_status END,
          latency_ms = CASE WHEN ${latest} THEN r.latency::int ELSE d.latency_ms END,
          error = CASE WHEN ${latest} THEN r.error ELSE d.error END,
          last_attempt_at = CASE WHEN ${latest} THEN r.at::timestamptz ELSE d.last_attempt_at END,
          first_attempt_at = least(d.first_attempt_at, r.at::timestamptz)
        FROM unnest(${updates.map((r) => r.deliveryId)}::text[], ${updates.map((r) => r.claimToken ?? null)}::text[],
          ${text(updates.map((r) => r.ok))}::text[], ${text(updates.map((r) => r.status))}::text[], ${text(updates.map((r) => r.latencyMs))}::text[],
          ${updates.map((r) => r.error)}::text[], ${updates.map((r) => iso(r.nextAttemptAt))}::text[], ${updates.map((r) => iso(r.at))}::text[])
          AS r(id, token, ok, status, latency, error, next, at)
        WHERE d.id = r.id AND (${ours} OR d.last_attempt_at IS DISTINCT FROM r.at::timestamptz)`;
      try {
        return await recordStreaks(results, retry);
      } catch (err) {
        if (updates.length === 0) throw err;
        throw new AttemptsPartlyRecorded(err);
      }
    },

    /**
     * Forgets what is older than `days`: finished deliveries, then events with no
     * delivery left, then conversion claims and pixel counts per click (kept three times
     * as long: an order's late repeat is still recognised), and the clicks link.clicked
     * events held (a day). link.clicked deliveries and events go after `clickDays` when
     * that is fewer. Each table a batch at a time until none is left or `until` (epoch
     * ms) has passed, so it keeps up with any rate of new rows; batches that another
     * sender is deleting are skipped. Returns the rows deleted.
     */
    async sweep(days: number, options: { clickDays?: number; batch?: number; until?: number } = {}): Promise<number> {
      const { batch = 5_000, until = Infinity } = options;
      const clickDays = Math.min(days, options.clickDays ?? days);
      const cutoff = sql`now() - make_interval(days => ${days})`;
      const clickCutoff = sql`now() - make_interval(days => ${clickDays})`;
      const longCutoff = sql`now() - make_interval(days => ${3 * days})`;
      // One statement per table for both retentions: each walks its table's age index
      // (finished deliveries: migration 0020; events: 0018) up to the shorter cutoff,
      // then holds each row to its type's.
      const statements = [
        () => sql`
          DELETE FROM webhook_deliveries WHERE id IN (
            SELECT id FROM webhook_deliveries WHERE status <> 'pending' AND created_at < ${clickCutoff}
              AND created_at < CASE WHEN event_type = 'link.clicked' THEN ${clickCutoff} ELSE ${cutoff} END
            LIMIT ${batch} FOR UPDATE SKIP LOCKED)`,
        () => sql`
          DELETE FROM webhook_events WHERE id IN (
            SELECT id FROM webhook_events e WHERE created_at < ${clickCutoff}
              AND created_at < CASE WHEN type = 'link.clicked' THEN ${clickCutoff} ELSE ${cutoff} END
              AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.event_id = e.id)
            LIMIT ${batch} FOR UPDATE SKIP LOCKED)`,
        () => sql`
          DELETE FROM webhook_conversion_claims WHERE (workspace_id, order_key) IN (
            SELECT workspace_id, order_key FROM webhook_conversion_claims WHERE created_at < ${longCutoff} LIMIT ${batch} FOR UPDATE SKIP LOCKED)`,
        // A click converts within the attribution window: its pixel count is not needed after it.
        () => sql`
          DELETE FROM webhook_pixel_clicks WHERE (workspace_id, click_id) IN (
            SELECT workspace_id, click_id FROM webhook_pixel_clicks WHERE created_at < ${longCutoff} LIMIT ${batch} FOR UPDATE SKIP LOCKED)`,
        // A crashed NATS server redelivers within minutes of its restart (migration 0017).
        () => sql`
          DELETE FROM webhook_sent_clicks WHERE (endpoint_id, click_id) IN (
            SELECT endpoint_id, click_id FROM webhook_sent_clicks WHERE created_at < now() - interval '1 day' LIMIT ${batch} FOR UPDATE SKIP LOCKED)`,
      ];
      let deleted = 0;
      for (const statement of statements) {
        for (;;) {
          const { count } = await statement();
          deleted += count;
          if (count < batch || Date.now() >= until) break;
        }
      }
      return deleted;
    },

    /**
     * Gives up deliveries whose endpoint is disabled or deleted, whoever holds them. Their
     * token goes too: a finished row carries none, so a manual retry (which makes it
     * pending again) cannot hand it back to a sender still holding the old claim.
     */
    async abandon(ids: readonly string[], reason: string): Promise<void> {
      if (ids.length === 0) return;
      await sql`
        UPDATE webhook_deliveries SET status = 'failed', error = ${reason}, next_attempt_at = NULL, claim_token = NULL
        WHERE id = ANY(${ids as string[]}) AND status = 'pending'`;
    },
  };
}

export type DeliveryStore = ReturnType<typeof deliveryStore>;
