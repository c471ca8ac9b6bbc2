/**
 * The hand-written pieces of the redirect path still kept, each against the Node
 * built-in it replaces, in process (issue 15: a hand-written piece stays only where it
 * buys at least 5 % of the end-to-end figure). Each row gives both costs per call,
 * their batches taking turns, and what the hand-written one saves per redirect as a
 * share of the redirector's server CPU per request measured in the same run. (The
 * ingester's fast line path states its own figure in its file.)
 */
import { createHmac, randomBytes, randomFillSync } from 'node:crypto';
import { HmacSha256 } from '../shared/hmac-sha256.ts';
import { randomBytesInto } from '../shared/random-pool.ts';
import type { Row } from './suite.ts';
import { nsPerCallEach } from './timing.ts';

/** `redirectCpuNs`: the redirector's server CPU per request of the same run. */
export function measurePieces(redirectCpuNs: number): Row[] {
  const rows: Row[] = [];
  const add = (piece: string, hand: (i: number) => unknown, library: string, viaLibrary: (i: number) => unknown) => {
    const [handNs, libraryNs] = nsPerCallEach([hand, viaLibrary]);
    const saving = libraryNs! - handNs!;
    rows.push({
      name: piece,
      'hand-written ns': Math.round(handNs!),
      library,
      'library ns': Math.round(libraryNs!),
      'saved ns/redirect': Math.round(saving),
      '% of redirector CPU/req': Number(((saving / redirectCpuNs) * 100).toFixed(1)),
    });
  };

  const id = Buffer.alloc(47);
  const key = randomBytes(32);
  const mac = new HmacSha256(key);
  // A redirect takes two MACs (click id, visitor hash) of ~35-100 bytes.
  add('two HMAC-SHA256 of a click id (hmac-sha256.ts)', () => (mac.sign(id, 0, 35, id, 35, 12), mac.sign(id, 0, 35, id, 35, 12)), 'node:crypto createHmac', () => (createHmac('sha256', key).update(id.subarray(0, 35)).digest(), createHmac('sha256', key).update(id.subarray(0, 35)).digest()));
  add('click id random bytes (random-pool.ts)', () => randomBytesInto(id, 7, 13), 'randomFillSync per click', () => randomFillSync(id, 7, 6));
  return rows;
}
