/**
 * A string-keyed hash table for the redirector's per-request lookups (host, short code).
 *
 * Why not a Map: every request brings its keys as fresh strings (uWS copies them out of
 * the request), and a V8 Map lookup with a string whose hash has never been computed is
 * several times slower than one with a known string: ~350-500 ns per lookup against a
 * 100k-entry Map in the redirect benchmark, versus ~200 ns here. This table hashes in JS
 * (seeded FNV-1a with a murmur3 finaliser; the per-process seed keeps clients from
 * precomputing colliding keys) and probes an Int32Array index (linear probing, load
 * factor <= 1/2 counting deleted slots) into one array of key, value pairs (adjacent, so
 * a hit usually costs one cache miss less than separate arrays would).
 *
 * Kept under the 5 % a hand-written piece must buy (issue 15), because the redirect
 * figure needs it. In process, the bench's row ("Hand-written pieces kept", "host +
 * short code lookup") shows little (~20 ns, 0.1 %): its tables stay in cache. In the
 * real server they do not. `perf record` of the benchmark redirector under wrk
 * (2026-11-28) put V8's Map lookup (Builtins_FindOrderedHashMapEntry) at 4.9 % of the
 * process's CPU for find() alone, and with this table back (the same tree otherwise,
 * 6 alternating wrk rounds) the redirector's CPU per request fell 16.31 -> 15.56 µs
 * (median, -4.6 %; mean -2.5 %). Against bc37245 (`npm run bench:against -- bc37245
 * --rounds 7`) the redirect figure was -3.9 to -9.2 % with Maps and -2.3 / -1.7 %
 * with this table: it is what keeps that figure within the 5 % the issue allows.
 */
import { randomBytes } from 'node:crypto';

const EMPTY = 0;
const DELETED = -1;
const MIN_CAPACITY = 16;

const SEED = randomBytes(4).readInt32LE(0);

/** Seeded FNV-1a over UTF-16 code units, then fmix32. */
export function tableHash(key: string): number {
  let h = 0x811c9dc5 ^ SEED;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

export class StringKeyedTable<V> {
  /** Per bucket: EMPTY, DELETED, or entry index + 1. */
  #index = new Int32Array(MIN_CAPACITY);
  #mask = MIN_CAPACITY - 1;
  /** Entry i: key at [2i], value at [2i + 1]; a deleted entry's key is undefined. */
  #entries: unknown[] = [];
  /** Entry indexes freed by delete, reused by set. */
  #free: number[] = [];
  #count = 0;
  #deleted = 0;

  get size(): number {
    return this.#count;
  }

  get(key: string): V | undefined {
    const index = this.#index;
    const mask = this.#mask;
    let bucket = tableHash(key) & mask;
    for (;;) {
      const entry = index[bucket]!;
      if (entry === EMPTY) return undefined;
      if (entry > 0 && this.#entries[2 * entry - 2] === key) return this.#entries[2 * entry - 1] as V;
      bucket = (bucket + 1) & mask;
    }
  }

  has(key: string): boolean {
    return this.#bucketOf(key) !== -1;
  }

  set(key: string, value: V): void {
    const found = this.#bucketOf(key);
    if (found !== -1) {
      this.#entries[2 * this.#index[found]! - 1] = value;
      return;
    }
    if ((this.#count + this.#deleted + 1) * 2 > this.#index.length) this.#rebuild();
    let entry = this.#free.pop();
    if (entry === undefined) {
      entry = this.#entries.length / 2;
      this.#entries.push(key, value);
    } else {
      this.#entries[2 * entry] = key;
      this.#entries[2 * entry + 1] = value;
    }
    // Insert into the first free bucket: deleted buckets are reused.
    const mask = this.#mask;
    let bucket = tableHash(key) & mask;
    while (this.#index[bucket]! > 0) bucket = (bucket + 1) & mask;
    if (this.#index[bucket] === DELETED) this.#deleted--;
    this.#index[bucket] = entry + 1;
    this.#count++;
  }

  delete(key: string): boolean {
    const bucket = this.#bucketOf(key);
    if (bucket === -1) return false;
    const entry = this.#index[bucket]! - 1;
    this.#index[bucket] = DELETED;
    this.#entries[2 * entry] = undefined;
    this.#entries[2 * entry + 1] = undefined;
    this.#free.push(entry);
    this.#count--;
    this.#deleted++;
    return true;
  }

  *entries(): IterableIterator<[string, V]> {
    for (let i = 0; i < this.#entries.length; i += 2) {
      const key = this.#entries[i];
      if (key !== undefined) yield [key as string, this.#entries[i + 1] as V];
    }
  }

  #bucketOf(key: string): number {
    const mask = this.#mask;
    let bucket = tableHash(key) & mask;
    for (;;) {
      const entry = this.#index[bucket]!;
      if (entry === EMPTY) return -1;
      if (entry > 0 && this.#entries[2 * entry - 2] === key) return bucket;
      bucket = (bucket + 1) & mask;
    }
  }

  /** A fresh index for the live entries, sized so that they fill at most a quarter of it. */
  #rebuild(): void {
    let capacity = MIN_CAPACITY;
    while (capacity < (this.#count + 1) * 4) capacity *= 2;
    const index = new Int32Array(capacity);
    const mask = capacity - 1;
    for (let i = 0; i < this.#entries.length / 2; i++) {
      const key = this.#entries[2 * i];
      if (key === undefined) continue;
      let bucket = tableHash(key as string) & mask;
      while (index[bucket] !== EMPTY) bucket = (bucket + 1) & mask;
      index[bucket] = i + 1;
    }
    this.#index = index;
    this.#mask = mask;
    this.#deleted = 0;
  }
}
