import { randomBytes } from 'node:crypto';
import type { KvBucket, KvEntry, KvWatch } from './bus.ts';

const DEFAULT_SCAN_BATCH = 1_000;

/**
 * A KV bucket inside one process, with the semantics of a NATS KV bucket of history 1:
 * one latest entry per key (a delete is an entry with a null value), revisions from
 * one counter, watchers that replay current values then get every change.
 */
export function memoryKv(): KvBucket {
  const values = new Map<string, KvEntry>();
  const watchers = new Set<(entry: KvEntry) => void>();
  const generation = randomBytes(8).toString('hex');
  let revision = 0;

  function write(key: string, value: Uint8Array | null): number {
    const entry: KvEntry = { key, value, revision: ++revision };
    values.set(key, entry);
    // Delivered asynchronously, as over a network, so writers never run watcher code.
    for (const w of watchers) queueMicrotask(() => w(entry));
    return entry.revision;
  }

  const byRevision = (a: KvEntry, b: KvEntry) => a.revision - b.revision;

  return {
    async get(key) {
      const e = values.get(key);
      return e && e.value !== null ? e : null;
    },
    put: async (key, value) => write(key, value),
    async putMany(entries) {
      // expectedRevision: a mismatch is put again expecting the key's actual revision (as
      // on NATS, nats-kv-put-many.ts), which always succeeds here, as nothing writes in
      // between in one synchronous pass (and no put arrives late in one process).
      return entries.map(({ key, value }) => write(key, value));
    },
    async delete(key) {
      write(key, null);
    },
    async status() {
      return { entries: values.size, revision, generation };
    },
    async watch(onEntry, options = {}) {
      const from = options.fromRevision ?? 0;
      // A full replay gives current values; a resumed one every change since `from`, deletes included.
      const current = [...values.values()].filter((e) => (from > 0 ? e.revision >= from : e.value !== null)).sort(byRevision);
      const upTo = revision;
      // Changes after the replay point are delivered live; older ones were replayed.
      const live = (e: KvEntry) => e.revision > upTo && onEntry(e);
      watchers.add(live);
      for (const e of current) onEntry(e);
      const watch: KvWatch = { initialized: Promise.resolve(), stop: () => void watchers.delete(live) };
      return watch;
    },
    async *scan(batchSize = DEFAULT_SCAN_BATCH) {
      // The entries as they stand now; later writes are past the highest revision delivered.
      const current = [...values.values()].sort(byRevision);
      for (let i = 0; i < current.length; i += batchSize) yield current.slice(i, i + batchSize);
    },
  };
}
