import type { ClickHouseClient } from '@clickhouse/client';
import type { Sql } from '../../../shared/db/postgres.ts';
import type { ExperimentReport } from '../../../shared/schemas/analytics.ts';
import type { Dimension } from '../../../shared/schemas/analytics-dimensions.ts';
import { breakdown, type BreakdownFilter } from './breakdown-query.ts';
import type { ClickScope } from './click-filter.ts';
import { conversionRate } from './conversion-filter.ts';
import { compareWithControl, MINIMUM_SAMPLE } from './experiment-statistics.ts';

export interface ExperimentFilter extends ClickScope {
  linkId: string;
  from: string;
  to: string;
  timezone: string;
  /** `default` or a rule id. */
  control: string;
}

/** Variants beyond this many are not listed (a link sees at most a few dozen rules). */
const MAX_VARIANTS = 1000;

/**
 * Routing rules as experiments: the link's clicks by the rule that decided them
 * (`default`: none did), each with its conversions, compared with the control.
 * The figures are the `rule` breakdown of the link (exact unique visitors, as for
 * one link everywhere); the statistics are experiment-statistics.ts.
 */
export async function experimentReport(ch: ClickHouseClient, sql: Sql, f: ExperimentFilter, signal?: AbortSignal): Promise<ExperimentReport | { missingControl: string }> {
  const filter: BreakdownFilter = { ...f, dimension: 'rule' as Dimension, page: 1, limit: MAX_VARIANTS };
  const { rows, convertedClicks } = await breakdown(ch, sql, filter, undefined, signal);
  // The statistics compare proportions of clicks: a click that converted twice (two
  // orders) is one success, not two; and a success is a click of the range converted
  // within the range (breakdown-query.ts), never a conversion of an earlier range's click,
  // so an arm's successes never outnumber its clicks.
  const converted = (r: (typeof rows)[number]) => convertedClicks.get(r.value) ?? 0;
  // The rule breakdown also has a row for a rule whose only activity in the range is a
  // conversion of an earlier click: no variant of this range (it decided none of its clicks).
  const variants = rows.filter((r) => r.value !== null && r.clicks > 0);
  const control = variants.find((r) => r.value === f.control) ?? (f.control === 'default' ? undefined : null);
  if (control === null) {
    // A rule id that decided no click of the link in the range: it must be one of the
    // link's rules (its own, or a campaign-wide rule of the link's campaign).
    const [rule] = await sql<{ id: string }[]>`
      SELECT r.id FROM rules r JOIN links l ON l.id = ${f.linkId} AND l.workspace_id = r.workspace_id
      WHERE r.workspace_id = ${f.workspaceId} AND r.id = ${f.control} AND (r.link_id = l.id OR (r.link_id IS NULL AND r.campaign_id = l.campaign_id))`;
    if (!rule) return { missingControl: f.control };
  }
  const controlCounts = { clicks: control?.clicks ?? 0, conversions: control ? converted(control) : 0 };
  return {
    linkId: f.linkId,
    from: f.from,
    to: f.to,
    control: f.control,
    minimumSample: { ...MINIMUM_SAMPLE },
    variants: variants.map((r) => {
      const isControl = r.value === f.control;
      return {
        variant: r.value!,
        name: r.name ?? null,
        type: r.type ?? null,
        isControl,
        clicks: r.clicks,
        uniqueVisitors: r.uniqueClicks,
        conversions: r.conversions,
        convertedClicks: converted(r),
        conversionRate: conversionRate(converted(r), r.clicks),
        revenue: r.revenue,
        revenuePerClick: r.clicks === 0 ? 0 : Math.round((r.revenue / r.clicks) * 10_000) / 10_000,
        comparison: isControl ? null : compareWithControl({ clicks: r.clicks, conversions: converted(r) }, controlCounts),
      };
    }),
  };
}
