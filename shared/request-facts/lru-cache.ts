/**
 * Bounded least-recently-used cache on a Map (Maps iterate in insertion order, so the
 * first key is the least recently used one). A hit re-inserts the entry to mark it
 * recent; inserting past `max` evicts the oldest. Memory is bounded by `max` whatever
 * the input, which matters for caches keyed by client-controlled strings.
 */
export class LruCache<K, V> {
  readonly max: number;
  readonly #map = new Map<K, V>();

  constructor(max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError('LruCache max must be a positive integer');
    this.max = max;
  }

  get size(): number {
    return this.#map.size;
  }

  get(key: K): V | undefined {
    const value = this.#map.get(key);
    if (value !== undefined) {
      this.#map.delete(key);
      this.#map.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    if (this.#map.has(key)) this.#map.delete(key);
    else if (this.#map.size >= this.max) {
      const oldest = this.#map.keys().next();
      if (!oldest.done) this.#map.delete(oldest.value);
    }
    this.#map.set(key, value);
  }

  has(key: K): boolean {
    return this.#map.has(key);
  }

  clear(): void {
    this.#map.clear();
  }
}
