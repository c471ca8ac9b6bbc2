import type { ClickHouseClient } from '@clickhouse/client';
import { LRUCache } from 'lru-cache';
import type { Sql } from '../../../shared/db/postgres.ts';
import type { Dimension } from '../../../shared/schemas/analytics-dimensions.ts';
import { dimensionSources } from './dimensions.ts';
import { untilClientCloses } from './client-closed.ts';
import { queryRows } from './query-rows.ts';

/**
 * Link-valued dimensions (tags) in ClickHouse: a request that filters or breaks down by
 * one makes sure the snapshot of the workspace's link values as Postgres holds them now
 * is in link_values (clickhouse/0013), and its queries read that snapshot by
 * fingerprint (linkValueRows). Nothing assumes one API instance: two writing the same
 * snapshot at once write it twice (readers fold), and each finds another's.
 */

/** The fingerprints of the snapshots a request reads, by dimension. */
export type LinkValueSnapshots = Partial<Record<Dimension, string>>;

/** How long a snapshot seen written is taken as written without asking ClickHouse again. */
const SEEN_MS = 10 * 60_000;
/** A snapshot older than this is written again (link_values' TTL drops rows after 7 days). */
const REWRITE_AFTER = 'INTERVAL 1 DAY';

export class LinkValueStore {
  readonly #seen = new LRUCache<string, true>({ max: 10_000, ttl: SEEN_MS });
  readonly #ch: ClickHouseClient;
  readonly #sql: Sql;

  readonly #now: () => number;

  constructor(ch: ClickHouseClient, sql: Sql, now: () => number = Date.now) {
    this.#ch = ch;
    this.#sql = sql;
    this.#now = now;
  }

  /**
   * The snapshot fingerprint of each link-valued dimension in `wanted`, written to ClickHouse
   * if it was not. With the request's `signal`, its statements are abandoned when its client
   * goes away, the write too: a snapshot is written whole or not at all (#write), and one
   * not written is written by the next request that needs it.
   */
  async snapshots(workspaceId: string, wanted: Dimension[], signal?: AbortSignal): Promise<LinkValueSnapshots> {
    const out: LinkValueSnapshots = {};
    for (const dimension of new Set(wanted)) {
      const source = dimensionSources[dimension];
      if (source.kind !== 'linkValues') continue;
      let fingerprint = await source.fingerprint(this.#sql, workspaceId);
      if (!this.#seen.has(`${workspaceId}/${dimension}/${fingerprint}`)) {
        let last = await this.#lastWritten(workspaceId, dimension, fingerprint, signal);
        if (last === null || last.stale) {
          // The values come with their own fingerprint: a change made meanwhile (here or on
          // another instance) would otherwise file the new values under the old state's
          // fingerprint, where they would stand until the rows expire, whenever the links
          // came back to that state. They are filed, and this request reads, as they are now.
          const read = await source.linkValues(this.#sql, workspaceId);
          if (read.fingerprint !== fingerprint) {
            fingerprint = read.fingerprint;
            last = await this.#lastWritten(workspaceId, dimension, fingerprint, signal);
          }
          if (last === null || last.stale) await this.#write(workspaceId, dimension, fingerprint, read.values, last?.at ?? notWritten(this.#now()), signal);
        }
        this.#seen.set(`${workspaceId}/${dimension}/${fingerprint}`, true);
      }
      out[dimension] = fingerprint;
    }
    return out;
  }

  /** When the snapshot was last written, and whether that is over a day ago; null: never. */
  async #lastWritten(workspaceId: string, dimension: Dimension, fingerprint: string, signal: AbortSignal | undefined): Promise<{ at: string; stale: boolean } | null> {
    const rows = await queryRows<{ at: string; stale: number | boolean }>(
      this.#ch,
      `SELECT toString(max(written_at)) AS at, max(written_at) < now() - ${REWRITE_AFTER} AS stale FROM link_values
        WHERE workspace_id = {ws:String} AND dimension = {dim:String} AND fingerprint = {fp:String} AND link_id = '' HAVING count() > 0`,
      { ws: workspaceId, dim: dimension, fp: fingerprint },
      signal,
    );
    return rows[0] ? { at: rows[0].at, stale: Boolean(Number(rows[0].stale)) } : null;
  }

  /**
   * The marker row in the same insert: a snapshot is written whole or not at all. The
   * deduplication token names the snapshot and the state it replaces (never written, or
   * last written at `replacing`): instances that find the same state write it once.
   */
  async #write(workspaceId: string, dimension: Dimension, fingerprint: string, values: Map<string, string[]>, replacing: string, signal: AbortSignal | undefined): Promise<void> {
    const rows = [...values].map(([link_id, link_values]) => ({ workspace_id: workspaceId, dimension, fingerprint, link_id, link_values }));
    rows.push({ workspace_id: workspaceId, dimension, fingerprint, link_id: '', link_values: [] });
    await untilClientCloses(signal, (abort) =>
      this.#ch.insert({
        table: 'link_values',
        values: rows,
        format: 'JSONEachRow',
        clickhouse_settings: { insert_deduplication_token: `link_values/${workspaceId}/${dimension}/${fingerprint}/${replacing}` },
        ...abort,
      }),
    );
  }
}

/**
 * What a snapshot found not written replaces, in its write's token: nothing, this hour.
 * Not a constant: a snapshot whose rows expired (nobody asked for 7 days, or the links
 * came back to a state of over 7 days ago) is written again, and ClickHouse, which
 * remembers a table's last 1,000 tokens however old, would drop that write as a repeat
 * of the first one, and every one after it, leaving the snapshot empty until the first
 * token was forgotten (a click would count under no tag). Instances that find it missing
 * in the same hour still write it once.
 */
function notWritten(nowMs: number): string {
  return `never@${new Date(nowMs).toISOString().slice(0, 13)}`;
}

/**
 * A subquery of a snapshot's rows, one per link with any value: (link_id, link_values),
 * parameters prefixed `p`.
 */
export function linkValueRows(workspaceId: string, dimension: Dimension, fingerprint: string | undefined, p: string): { sql: string; params: Record<string, unknown> } {
  return {
    sql: `(SELECT link_id, any(link_values) AS link_values FROM link_values
      WHERE workspace_id = {${p}LvWs:String} AND dimension = {${p}LvDim:String} AND fingerprint = {${p}LvFp:String} AND link_id != ''
      GROUP BY link_id)`,
    params: { [`${p}LvWs`]: workspaceId, [`${p}LvDim`]: dimension, [`${p}LvFp`]: fingerprint ?? '' },
  };
}
