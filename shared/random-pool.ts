/**
 * Random bytes for the click id (6 a click), and for ids and short codes (shared/ids.ts),
 * drawn from a pool refilled by
 * crypto.randomFillSync: a call of randomFillSync costs a fixed ~2 µs here whatever it
 * fills, so filling 6 KiB at once spreads that over a thousand clicks.
 *
 * Kept, measured: randomFillSync per click cost 2.1-2.8 µs more than the pool, 10-14 %
 * of a redirect's server CPU (in process, batches alternating, three runs on the busy
 * 2-core machine, 2026-11-26). Same-run figure: `npm run bench -- redirect`, table
 * "Hand-written pieces kept", row "click id random bytes", column "% of redirector
 * CPU/req" (what the pool saves over randomFillSync, against the redirector's server
 * CPU per request of that run).
 */
import { randomFillSync } from 'node:crypto';

const POOL_SIZE = 6 * 1024;

class RandomPool {
  readonly #bytes = Buffer.allocUnsafe(POOL_SIZE);
  #offset = POOL_SIZE;

  /** Fills [start, end) of `target` (at most POOL_SIZE bytes) with random bytes, each handed out once. */
  fill(target: Uint8Array, start: number, end: number): void {
    const length = end - start;
    if (this.#offset + length > POOL_SIZE) {
      randomFillSync(this.#bytes);
      this.#offset = 0;
    }
    this.#bytes.copy(target, start, this.#offset, this.#offset + length);
    this.#offset += length;
  }
}

const pool = new RandomPool();

export function randomBytesInto(target: Uint8Array, start: number, end: number): void {
  pool.fill(target, start, end);
}
