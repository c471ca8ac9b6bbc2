import { randomBytes } from 'node:crypto';
import type { KV } from 'nats';
import type { Lease } from './bus.ts';
import { isJetStreamError, isUnreachable, jetStreamErrors } from './jetstream-errors.ts';

interface Claim {
  holder: string;
  /** The holder's ttl: a claim left unchanged this long is expired. Absent from the previous release's claims (the taker's own ttl stands in). */
  ttlMs?: number;
  /**
   * Epoch ms on the holder's clock. Not read here: written for takers of the previous
   * release, which compare it with their own clock, during a rolling upgrade.
   */
  expiresAt: number;
}

/** A claim this process found on a lease key, and when (performance.now()) it first found it there. */
interface Sighting {
  revision: number;
  holder: string;
  firstSeenAt: number;
}

/**
 * Per bucket (one per bus connection, i.e. per process outside tests), per lease name:
 * the claim last found there. Bounded: one entry per lease name this process asks for
 * (a few), dropped when this process takes the lease.
 */
const sightings = new WeakMap<KV, Map<string, Sighting>>();

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Leases as keys of one KV bucket, changed only by compare-and-set on the key's
 * revision: `create` when the key is absent (or deleted), otherwise an update
 * expecting the revision read, allowed only once the claim there has expired. Of
 * two processes racing for a free or expired lease, exactly one write succeeds.
 *
 * Expiry is judged without comparing hosts' clocks: every renewal writes the key, so
 * a live holder (renewing every third of its ttl) changes the revision well within
 * its ttl. A claim this process has found at the same revision for at least the
 * claim's ttl, as elapsed on its own monotonic clock, is one whose holder stopped
 * renewing: it may be taken. (The holder is compared too: a bucket deleted and made
 * again starts its revisions over.) The cost: the count starts at this process's
 * first sighting, so a crashed holder's lease is taken one ttl after the taker first
 * found its last renewal (plus the taker's retry interval): about a ttl after that
 * renewal for a taker trying all along, a ttl after its first ask for one that comes
 * later. A released lease (key deleted) is taken at once.
 */
export async function natsTryLease(kv: KV, name: string, ttlMs: number): Promise<Lease | null> {
  const holder = `${process.pid}-${randomBytes(6).toString('hex')}`;
  const claim = () => encoder.encode(JSON.stringify({ holder, ttlMs, expiresAt: Date.now() + ttlMs } satisfies Claim));
  const seen = sightingsOf(kv);
  let revision: number;
  try {
    revision = await kv.create(name, claim());
  } catch (err) {
    if (!isJetStreamError(err, jetStreamErrors.wrongLastSequence)) throw err; // not "the key exists"
    const current = await kv.get(name);
    if (current === null) return null; // taken and let go between our two calls: next time
    if (current.operation === 'PUT') {
      // Read after the get answered (and before the update below is sent): the time counted
      // between two sightings never exceeds how long the claim really stood unchanged.
      const now = performance.now();
      const held = JSON.parse(decoder.decode(current.value)) as Claim;
      const before = seen.get(name);
      if (before?.revision !== current.revision || before.holder !== held.holder) {
        seen.set(name, { revision: current.revision, holder: held.holder, firstSeenAt: now });
        return null;
      }
      if (now - before.firstSeenAt < (held.ttlMs ?? ttlMs)) return null;
    }
    try {
      revision = await kv.update(name, claim(), current.revision);
    } catch (err) {
      if (isJetStreamError(err, jetStreamErrors.wrongLastSequence)) return null; // another taker won
      throw err;
    }
  }
  seen.delete(name);
  return {
    async renew() {
      try {
        revision = await kv.update(name, claim(), revision);
        return true;
      } catch (err) {
        // Taken over after it expired, or NATS unreachable (a timeout, a closed connection): either way not provably ours.
        if (isJetStreamError(err, jetStreamErrors.wrongLastSequence) || isUnreachable(err)) return false;
        throw err;
      }
    },
    async release() {
      try {
        await kv.delete(name, { previousSeq: revision });
      } catch (err) {
        // Taken over meanwhile: not ours to delete; unreachable: it expires by itself.
        if (!isJetStreamError(err, jetStreamErrors.wrongLastSequence) && !isUnreachable(err)) throw err;
      }
    },
  };
}

function sightingsOf(kv: KV): Map<string, Sighting> {
  let seen = sightings.get(kv);
  if (!seen) {
    seen = new Map();
    sightings.set(kv, seen);
  }
  return seen;
}
