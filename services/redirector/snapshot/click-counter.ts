import type { Bus, KvWatch } from '../../../shared/bus/bus.ts';
import { kvBuckets } from '../../../shared/bus/bus.ts';
import { isUnreachable } from '../../../shared/bus/jetstream-errors.ts';
import { errorFields, type Logger } from '../../../shared/logger.ts';
import type { SnapshotStore } from './snapshot-store.ts';

export interface ClickCounter {
  /** Counts one counted (non-bot) click of a link on this redirector. */
  record(linkId: string): void;
  stop(): Promise<void>;
}

/**
 * clicksLimit across N redirectors. Each redirector keeps its own count per
 * limited link under the key `<linkId>.<instanceId>` of a shared bucket and
 * publishes it every `syncMs`; everyone watches the bucket, and a link's count is
 * the sum over all keys (restarted instances leave their keys, so history counts).
 *
 * Bound on overshoot: a redirector sees another's clicks at most `syncMs` plus
 * bus latency late, so past the limit at most (clicks per second of the other
 * redirectors) x (syncMs + latency) extra clicks get through; with the default
 * 50 ms and 1,000 clicks/s on a limited link across the fleet, about 50 to 60.
 * A single redirector never overshoots: its own clicks count at once.
 */
export async function clickCounter(deps: { bus: Bus; store: SnapshotStore; instanceId: string; logger: Logger; syncMs?: number }): Promise<ClickCounter> {
  const { store, instanceId } = deps;
  const kv = await deps.bus.kv(kvBuckets.clickCounts);
  const mine = new Map<string, number>();
  const others = new Map<string, Map<string, number>>();
  const dirty = new Set<string>();
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();

  const othersTotal = (linkId: string) => {
    let sum = 0;
    for (const n of others.get(linkId)?.values() ?? []) sum += n;
    return sum;
  };
  const refresh = (linkId: string) => store.setClicks(linkId, othersTotal(linkId) + (mine.get(linkId) ?? 0));

  const watch: KvWatch = await kv.watch((entry) => {
    const dot = entry.key.lastIndexOf('.');
    const linkId = entry.key.slice(0, dot);
    const instance = entry.key.slice(dot + 1);
    if (instance === instanceId || entry.value === null) return;
    const count = Number(decoder.decode(entry.value));
    if (!Number.isFinite(count)) return;
    let perInstance = others.get(linkId);
    if (!perInstance) others.set(linkId, (perInstance = new Map()));
    perInstance.set(instance, count);
    refresh(linkId);
  });
  await watch.initialized;

  let syncing = false;
  const timer = setInterval(async () => {
    if (syncing || dirty.size === 0) return;
    syncing = true;
    const links = [...dirty];
    dirty.clear();
    try {
      await Promise.all(links.map((linkId) => kv.put(`${linkId}.${instanceId}`, encoder.encode(String(mine.get(linkId) ?? 0)))));
    } catch (err) {
      for (const l of links) dirty.add(l);
      deps.logger.warn('click count sync failed; will retry', errorFields(err));
    } finally {
      syncing = false;
    }
  }, deps.syncMs ?? 50);
  timer.unref();

  return {
    record(linkId) {
      if (store.clicksLimit(linkId) === null) return;
      mine.set(linkId, (mine.get(linkId) ?? 0) + 1);
      dirty.add(linkId);
      refresh(linkId);
    },
    async stop() {
      clearInterval(timer);
      watch.stop();
      try {
        await Promise.all([...dirty].map((linkId) => kv.put(`${linkId}.${instanceId}`, encoder.encode(String(mine.get(linkId) ?? 0)))));
      } catch (err) {
        // The last counts stay unshared: other redirectors may let that many clicks more through a limit.
        if (!isUnreachable(err)) throw err;
        deps.logger.warn('click counts not shared on stop: NATS unreachable', { links: dirty.size, ...errorFields(err) });
      }
    },
  };
}
