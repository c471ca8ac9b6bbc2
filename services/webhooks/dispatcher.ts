import { errorFields, type Logger } from '../../shared/logger.ts';
import { claimsInHand } from './claims-in-hand.ts';
import { AttemptsPartlyRecorded, type AttemptResult, type ClaimedDelivery, type DeliveryStore } from './delivery-store.ts';
import type { EndpointDirectory } from './endpoint-directory.ts';
import { nextAttemptAt, type RetryPolicy } from './retry-schedule.ts';
import type { WebhookSender } from './send-webhook.ts';
import type { WebhooksMetrics } from './webhooks-metrics.ts';

export interface Dispatcher {
  /**
   * Whether the endpoint can take another delivery here now, besides `planned` ones about to
   * be dispatched; never one whose secret does not open here (Endpoint.signer null).
   */
  hasRoom(endpointId: string, planned?: number): boolean;
  /**
   * Deliveries each endpoint with work here can still take (those without work here:
   * `laneLimit`); none for those whose secret does not open here.
   */
  room(): Map<string, number>;
  /** What a lane holds at most, running or queued. */
  readonly laneLimit: number;
  /** Deliveries this sender can still take on, over all endpoints (none while their bodies fill `maxHeldBytes`). */
  freeCapacity(): number;
  /** Body bytes this sender can still take on. */
  freeBytes(): number;
  /** Attempts claimed deliveries, each endpoint at most `maxInFlightPerEndpoint` at a time. */
  dispatch(deliveries: readonly ClaimedDelivery[]): void;
  /**
   * Stopping: deliveries queued here and not started are handed back (due at once for
   * any sender), as are any dispatched from now on; then waits for the attempts under
   * way to finish and be recorded, and stops keeping claims alive.
   */
  drain(): Promise<void>;
}

interface EndpointLane {
  inFlight: number;
  queue: ClaimedDelivery[];
}

/** Results are written together: every this often, or at this many. */
const RECORD_EVERY_MS = 25;
const RECORD_BATCH = 1_000;

/**
 * Runs attempts. Each endpoint has its own lane: at most `maxInFlightPerEndpoint`
 * attempts at once and a few times that queued, so a slow endpoint holds up no other.
 * Outcomes are written in batches (a success, a retry time, a give-up), endpoints'
 * failure streaks with them; an endpoint failing for the retry window is disabled. A
 * first attempt's outcome usually goes into its delivery's insert instead (FirstAttempt).
 *
 * Every delivery's claim is kept alive from its dispatch (or its insert, for a first
 * attempt) until its outcome's write starts or it is handed back (ClaimsInHand; one whose
 * write failed is kept alive again until the write is made again): however long
 * it waits or runs here, no other sender takes it up meanwhile. One found taken up all the
 * same (this sender stalled for a whole claim) is dropped if still queued: the taker sends
 * it. One already under way finishes, and its attempt is recorded, but when it is due and
 * whether it is done stay the taker's: an outcome is written with the token of the claim
 * its attempt was made under (AttemptResult.claimToken), a hand-back with the delivery's
 * own, and each changes the schedule only of a row still carrying it (recordAttempts,
 * release). So an outcome written again (its first write's answer lost, say) after this
 * sender claimed the delivery afresh neither decides the new claim's schedule nor takes
 * the new claim from claims in hand: that stays held, and renewed, for its own attempt.
 */
export function createDispatcher(deps: {
  store: DeliveryStore;
  directory: EndpointDirectory;
  sender: WebhookSender;
  retry: RetryPolicy;
  maxInFlightPerEndpoint: number;
  /** Deliveries held (running or queued) over all endpoints. */
  maxHeld: number;
  /**
   * Their bodies' size (UTF-16 units, about bytes for JSON): a link.clicked batch may be
   * megabytes, so a count alone would not bound memory. An event's body shared by several
   * endpoints' deliveries counts once per delivery, erring on the safe side.
   */
  maxHeldBytes: number;
  metrics: WebhooksMetrics;
  logger: Logger;
}): Dispatcher {
  const { store, directory, sender, retry, logger, metrics } = deps;
  const laneLimit = deps.maxInFlightPerEndpoint * 4;
  const lanes = new Map<string, EndpointLane>();
  let held = 0;
  let heldBytes = 0;
  let results: AttemptResult[] = [];
  let recording: Promise<void> | null = null;
  let recordTimer: NodeJS.Timeout | null = null;
  const idleWaiters: Array<() => void> = [];
  /** Deliveries whose attempt is under way here (from leaving the queue until their outcome is handed to the recording). */
  const running = new Set<string>();
  const claims = claimsInHand({ store, logger, lost: drop });

  const lane = (id: string) => {
    let l = lanes.get(id);
    if (!l) lanes.set(id, (l = { inFlight: 0, queue: [] }));
    return l;
  };

  function scheduleRecord(): void {
    if (results.length >= RECORD_BATCH) void record();
    else recordTimer ??= setTimeout(() => void record(), RECORD_EVERY_MS);
  }

  async function record(): Promise<void> {
    if (recordTimer) clearTimeout(recordTimer);
    recordTimer = null;
    if (recording) return recording;
    const batch = results;
    results = [];
    if (batch.length === 0) return settleIdle();
    recording = write(batch).finally(() => {
      recording = null;
      if (results.length > 0) scheduleRecord();
      else settleIdle();
    });
    return recording;
  }

  /**
   * Writes outcomes, each with the claim its attempt was made under, and takes those claims
   * from claims in hand if still held (not once renewals found them taken up by another
   * sender; not a newer claim of the same delivery). A `stored` outcome takes none.
   */
  async function write(batch: AttemptResult[]): Promise<void> {
    const taken = claims.take(batch.flatMap((r) => (r.stored || r.claimToken === undefined ? [] : [[r.deliveryId, r.claimToken] as const])));
    let disabled: string[];
    try {
      disabled = await store.recordAttempts(batch, retry);
    } catch (err) {
      if (err instanceof AttemptsPartlyRecorded) {
        // The deliveries are written (their claims spent): only the endpoints' streaks are
        // left, and the attempts are not counted again. Stored, they take no claim: one this
        // sender makes on a delivery meanwhile (its retry due) is its retry's.
        results = batch.map((r): AttemptResult => (r.stored ? r : asStored(r))).concat(results);
      } else {
        // Kept for the next write; the claims taken are held again meanwhile (not over a
        // newer claim of the same delivery, which the rewrite will not take either).
        taken.putBack();
        results = batch.concat(results);
      }
      logger.warn('webhook attempts not recorded yet; retrying', { attempts: batch.length, ...errorFields(err) });
      await new Promise<void>((r) => setTimeout(r, 500));
      return;
    }
    for (const id of disabled) logger.warn('webhook endpoint disabled: failing for the whole retry window', { endpointId: id });
    if (disabled.length > 0) {
      void directory.refresh().catch((err) => logger.warn('webhook endpoints not re-read after disabling one; the periodic refresh will', errorFields(err)));
    }
  }

  /** An outcome left to record only in its endpoint's streak: no row to write, no claim. */
  function asStored(r: AttemptResult): AttemptResult {
    const { claimToken: _spent, ...rest } = r;
    return { ...rest, stored: true };
  }

  /**
   * The token of the delivery's claim: the one it was claimed with, or for a first attempt
   * stored without its outcome, the one its insert set (settled once `first.stored` is).
   */
  async function claimOf(delivery: ClaimedDelivery): Promise<string | undefined> {
    if (delivery.claimToken !== undefined || !delivery.first) return delivery.claimToken;
    return (await delivery.first.claimToken) ?? undefined;
  }

  function settleIdle(): void {
    if (held === 0 && results.length === 0 && !recording) idleWaiters.splice(0).forEach((w) => w());
  }

  /**
   * A delivery not stored yet hands its first outcome (or null: not attempted) to the
   * fan-out's insert. Returns whether the outcome still needs recording here, which it
   * does once the fan-out stopped waiting and stored the delivery without it; not when
   * that insert failed (the bus hands the event out again).
   */
  async function recordHere(delivery: ClaimedDelivery, outcome: AttemptResult | null): Promise<boolean> {
    if (!delivery.first) return true;
    if (delivery.first.offer(outcome)) return false;
    return delivery.first.stored;
  }

  async function run(delivery: ClaimedDelivery): Promise<void> {
    let endpoint = directory.get(delivery.endpointId);
    // Unknown or disabled here: so it is, or it was created or re-enabled a moment ago
    // (the directory is up to a second old). Only a fresh read may give the delivery up.
    if (!endpoint || !endpoint.enabled) {
      await directory.readSince(Date.now());
      endpoint = directory.get(delivery.endpointId);
    }
    const at = Date.now();
    if (!endpoint || !endpoint.enabled) {
      // Not stored yet: it is stored due for any sender, and the one that claims it gives it up.
      if (!(await recordHere(delivery, null))) return;
      // Not held past this either way: a delivery not given up is due when its claim ends, and its taker gives it up.
      await store.abandon([delivery.id], endpoint ? 'endpoint disabled' : 'endpoint deleted').catch((err) => logger.warn('abandoning a delivery failed', errorFields(err)));
      claims.release([delivery.id]);
      return;
    }
    if (endpoint.signer === null) {
      // Its secret does not open here (another LINKROUTE_SECRET): left to a sender that can
      // sign it, not given up. Rarely here: such an endpoint has no room in claims or fan-outs.
      await handBack([delivery]);
      return;
    }
    const attempt = await sender.send({ url: endpoint.url, signer: endpoint.signer }, { id: delivery.eventId, body: delivery.body });
    const attempts = delivery.attempts + 1;
    const result: AttemptResult = {
      deliveryId: delivery.id,
      endpointId: delivery.endpointId,
      at,
      ok: attempt.ok,
      status: attempt.status,
      latencyMs: attempt.latencyMs,
      error: attempt.error,
      nextAttemptAt: attempt.ok ? null : nextAttemptAt(retry, attempts, delivery.firstAttemptAt ?? at, Date.now()),
    };
    metrics.attempt(result.ok ? 'succeeded' : result.nextAttemptAt === null ? 'gave_up' : 'will_retry', attempt.latencyMs);
    // The endpoint's streak is recorded here either way: the attempt was made. Written here,
    // it carries the claim it was made under. Awaited before `results` is read: a write
    // takes the array in hand and puts a new one (record()), so an outcome pushed onto the
    // array read before the await (as `results.push(await ...)` does) went into a batch
    // already written, and was lost.
    const outcome = (await recordHere(delivery, result)) ? { ...result, claimToken: await claimOf(delivery) } : asStored(result);
    results.push(outcome);
    scheduleRecord();
  }

  let stopping = false;

  /**
   * Hands deliveries back without attempting them: one not stored yet is stored due
   * (its fan-out takes the null outcome), a stored one is released, due at once.
   */
  async function handBack(deliveries: readonly ClaimedDelivery[]): Promise<void> {
    const stored = await Promise.all(deliveries.map((d) => recordHere(d, null)));
    const back = deliveries.filter((_, i) => stored[i]);
    // Each with its own claim, taken from claims in hand if held. One not held here was
    // never held (dispatched while stopping); or it was found taken up, and its token is no
    // longer on its row either.
    const tokens = await Promise.all(back.map(claimOf));
    const handed = new Map(back.flatMap((d, i) => (tokens[i] === undefined ? [] : [[d.id, tokens[i]!] as const])));
    claims.take(handed);
    await store.release(handed).catch((err) => logger.warn('webhook deliveries not handed back; due again when their claim ends', { deliveries: handed.size, ...errorFields(err) }));
  }

  function pump(endpointId: string): void {
    const l = lane(endpointId);
    while (l.inFlight < deps.maxInFlightPerEndpoint && l.queue.length > 0) {
      const delivery = l.queue.shift()!;
      l.inFlight++;
      running.add(delivery.id);
      metrics.inFlight(1);
      run(delivery)
        .catch(async (err: unknown) => {
          // run() rejects before its attempt only (a directory read failing): no outcome is
          // recorded, so the delivery goes back, due at once, its claim no longer kept alive.
          logger.error('webhook delivery not attempted: handing it back', { deliveryId: delivery.id, ...errorFields(err) });
          await handBack([delivery]);
        })
        .finally(() => {
          running.delete(delivery.id);
          l.inFlight--;
          held--;
          heldBytes -= delivery.body.length;
          metrics.inFlight(-1);
          if (l.inFlight === 0 && l.queue.length === 0) lanes.delete(endpointId);
          else pump(endpointId);
          settleIdle();
        });
    }
  }

  /**
   * Deliveries a renewal found taken up by another sender: those still queued here are
   * not attempted here (their taker attempts them); those under way finish here. The rest
   * have finished here and wait to write their outcome again after a failed write (their
   * claims put back): that write then leaves the schedule to the taker (not logged).
   */
  function drop(ids: readonly string[]): void {
    const lost = new Set(ids);
    const underWay = ids.filter((id) => running.has(id)).length;
    let dropped = 0;
    for (const [endpointId, l] of lanes) {
      if (!l.queue.some((d) => lost.has(d.id))) continue;
      for (const d of l.queue.filter((q) => lost.has(q.id))) {
        held--;
        heldBytes -= d.body.length;
        dropped++;
      }
      l.queue = l.queue.filter((d) => !lost.has(d.id));
      if (l.inFlight === 0 && l.queue.length === 0) lanes.delete(endpointId);
    }
    if (dropped + underWay > 0) {
      logger.warn('webhook deliveries taken up by another sender while held here (their claim ran out); queued ones dropped', { dropped, underWay });
    }
    settleIdle();
  }

  /** Keeps the claims of deliveries taken on here alive; a first attempt's once its insert set one. */
  function holdClaims(deliveries: readonly ClaimedDelivery[]): void {
    for (const d of deliveries) {
      if (d.claimToken !== undefined) claims.hold(d.id, d.claimToken);
      else if (d.first) {
        void d.first.claimToken.then((claimToken) => {
          if (claimToken !== null) claims.hold(d.id, claimToken);
        });
      }
    }
  }

  const load = (id: string) => {
    const l = lanes.get(id);
    return l ? l.inFlight + l.queue.length : 0;
  };

  return {
    laneLimit,
    hasRoom(endpointId, planned = 0) {
      if (heldBytes >= deps.maxHeldBytes || stopping || directory.get(endpointId)?.signer === null) return false;
      return load(endpointId) + planned < laneLimit;
    },
    room() {
      const room = new Map([...lanes.keys()].map((id) => [id, Math.max(0, laneLimit - load(id))]));
      // None for endpoints whose secret does not open here: never claimed by this sender.
      for (const id of directory.unsigned()) room.set(id, 0);
      return room;
    },
    freeCapacity: () => (heldBytes >= deps.maxHeldBytes ? 0 : deps.maxHeld - held),
    freeBytes: () => Math.max(0, deps.maxHeldBytes - heldBytes),
    dispatch(deliveries) {
      if (stopping) {
        void handBack(deliveries);
        return;
      }
      holdClaims(deliveries);
      for (const d of deliveries) {
        held++;
        heldBytes += d.body.length;
        lane(d.endpointId).queue.push(d);
      }
      for (const id of new Set(deliveries.map((d) => d.endpointId))) pump(id);
    },
    async drain() {
      stopping = true;
      const queued = [...lanes.values()].flatMap((l) => l.queue.splice(0));
      for (const d of queued) {
        held--;
        heldBytes -= d.body.length;
      }
      for (const [id, l] of lanes) if (l.inFlight === 0) lanes.delete(id);
      await handBack(queued);
      if (held > 0 || results.length > 0 || recording) {
        const idle = new Promise<void>((resolve) => idleWaiters.push(resolve));
        void record();
        await idle;
      }
      // Nothing is held here any more, and nothing dispatched from now on is.
      claims.stop();
    },
  };
}
