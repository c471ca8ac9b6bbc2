/**
 * The hand-written pieces of the redirect path still kept, each against the library or
 * Node built-in it replaces, in process (a hand-written piece stays only where it buys
 * at least 5 % of the end-to-end figure, issue 15). The event JSON writer is not such a
 * replacement: it is the serializer the event's declaration builds, as it builds the
 * ingester's reader (event-json-writer.ts says why); its row shows what it costs
 * against JSON.stringify. Each row gives both costs per call, their
 * batches taking turns, and what the hand-written one saves per redirect as a share of
 * the redirector's server CPU per request measured in the same run. (The ingester's
 * fast line path has its row in the ingest suite.)
 */
import { createHmac, randomBytes, randomFillSync } from 'node:crypto';
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { HmacSha256 } from '../shared/hmac-sha256.ts';
import { clickEventJson } from '../shared/schemas/click-event.ts';
import { makeEvent } from './bench-events.ts';
import { randomBytesInto } from '../shared/random-pool.ts';
import type { Row } from './suite.ts';
import { nsPerCallEach } from './timing.ts';

type Op = (i: number) => unknown;

/** `redirectCpuNs`: the redirector's server CPU per request of the same run; `scale` < 1 shortens the timing (a trial run). */
export function measurePieces(redirectCpuNs: number, scale = 1): Row[] {
  const rows: Row[] = [];
  const calls = Math.max(100, Math.round(10_000 * scale));
  const batches = Math.max(4, Math.round(40 * scale));
  /** One row per library; all the ops' batches take turns. */
  const add = (piece: string, hand: Op, libraries: ReadonlyArray<[name: string, op: Op]>) => {
    const [handNs, ...libraryNs] = nsPerCallEach([hand, ...libraries.map(([, op]) => op)], calls, batches);
    libraries.forEach(([library], k) => {
      const saving = libraryNs[k]! - handNs!;
      rows.push({
        name: piece,
        'hand-written ns': Math.round(handNs!),
        library,
        'library ns': Math.round(libraryNs[k]!),
        'saved ns/redirect': Math.round(saving),
        '% of redirector CPU/req': Number(((saving / redirectCpuNs) * 100).toFixed(1)),
      });
    });
  };

  // A redirect takes two MACs (click id, visitor hash) of ~35-100 bytes.
  const id = Buffer.alloc(47);
  const message = id.subarray(0, 35);
  const key = randomBytes(32);
  const mac = new HmacSha256(key);
  // noble at its best: the key's state made once and cloned per MAC, as HmacSha256 keeps its midstates.
  const keyed = hmac.create(sha256, key);
  const digest = new Uint8Array(32);
  add('two HMAC-SHA256 of a click id (hmac-sha256.ts)', () => (mac.sign(id, 0, 35, id, 35, 12), mac.sign(id, 0, 35, id, 35, 12)), [
    ['node:crypto createHmac', () => (createHmac('sha256', key).update(message).digest(), createHmac('sha256', key).update(message).digest())],
    ['@noble/hashes hmac (keyed state cloned)', () => (keyed.clone().update(message).digestInto(digest), keyed.clone().update(message).digestInto(digest))],
  ]);

  // One event per redirect, of the mix the before/after drains use.
  const events = Array.from({ length: 256 }, (_, i) => makeEvent(i, 'pieces', 1_790_000_000_000 + i));
  add('click event JSON writer (event-json-writer.ts, built from the declaration)', (i) => clickEventJson(events[i & 255]!), [['JSON.stringify', (i) => JSON.stringify(events[i & 255]!)]]);

  add('click id random bytes (random-pool.ts)', () => randomBytesInto(id, 7, 13), [['randomFillSync per click', () => randomFillSync(id, 7, 6)]]);

  return rows;
}
