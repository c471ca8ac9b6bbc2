import type { ClickHouseClient } from '@clickhouse/client';
import { kvBuckets, type Bus, type KvBucket } from '../../shared/bus/bus.ts';
import { countedClicks } from '../../shared/clickhouse/counted-clicks.ts';
import { errorFields, type Logger } from '../../shared/logger.ts';

/** The key suffix of a link's base in the click-counts bucket (never an instance id: those are random hex). */
export const BASE_KEY_SUFFIX = 'base';

export interface ClicksLimitBases {
  /**
   * For links that just got a `clicksLimit` where they had none: makes their counts start
   * from the clicks they already have. Never throws: a link whose base could not be
   * written counts from now, and the failure is logged.
   */
  limitsSet(linkIds: readonly string[]): Promise<void>;
}

/**
 * A limit counts every counted click of its link, as Shlink's `maxVisits` counts every
 * visit, though redirectors count only while a link has a limit: each sums the keys
 * `<linkId>.<instance>` of the click-counts bucket (redirector click-counter.ts). When a
 * link gets a limit, the key `<linkId>.base` is set to the link's clicks in ClickHouse
 * minus what the bucket already holds for it (counts of an earlier limit, since
 * removed), so that the sum is the link's clicks, and grows with every click from then
 * on. Clicks of the last moment, not yet ingested, are missed (about a second's worth
 * while the ingesters keep up), as are clicks a redirector counts between the bucket's
 * read and the write; the limit's overshoot bound covers as much.
 */
export function clicksLimitBases(deps: { bus: Bus; clickhouse: ClickHouseClient; logger: Logger }): ClicksLimitBases {
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();

  /** What the bucket counts for each of `linkIds` now, its base left out. */
  async function bucketCounts(kv: KvBucket, linkIds: ReadonlySet<string>): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    for await (const batch of kv.scan()) {
      for (const entry of batch) {
        const dot = entry.key.lastIndexOf('.');
        const linkId = entry.key.slice(0, dot);
        if (!linkIds.has(linkId) || entry.key.slice(dot + 1) === BASE_KEY_SUFFIX || entry.value === null) continue;
        const count = Number(decoder.decode(entry.value));
        if (Number.isFinite(count)) counts.set(linkId, (counts.get(linkId) ?? 0) + count);
      }
    }
    return counts;
  }

  return {
    async limitsSet(linkIds) {
      if (linkIds.length === 0) return;
      try {
        const kv = await deps.bus.kv(kvBuckets.clickCounts);
        const [clicks, counted] = await Promise.all([countedClicks(deps.clickhouse, linkIds), bucketCounts(kv, new Set(linkIds))]);
        // Every link gets its base, 0 included: a base left from an earlier limit must not count twice.
        await kv.putMany(linkIds.map((linkId) => ({ key: `${linkId}.${BASE_KEY_SUFFIX}`, value: encoder.encode(String((clicks.get(linkId) ?? 0) - (counted.get(linkId) ?? 0))) })));
      } catch (err) {
        deps.logger.warn('clicksLimit set, but the clicks links had before could not be counted: the limit counts from now', { links: linkIds.length, ...errorFields(err) });
      }
    },
  };
}
