import { useMemo } from 'preact/hooks';
import { api, unwrap, type Overview } from '../api.ts';
import { BreakdownCard } from '../components/breakdown-card.tsx';
import { ErrorBox } from '../components/error-box.tsx';
import { Kpis } from '../components/kpis.tsx';
import type { Range } from '../components/range-controls.tsx';
import { TimeChart, type Series } from '../components/time-chart.tsx';
import { countryName, fmtInt, fmtMoney, fmtPercent } from '../format.ts';
import { href } from '../router.ts';
import { useLoad } from '../use-load.ts';

/** Filters the overview endpoints take today (the analytics API's own names). */
export interface OverviewFilters {
  campaignId?: string | undefined;
  linkId?: string | undefined;
  source?: 'link' | 'qr' | undefined;
}

async function loadOverview(range: Range, filters: OverviewFilters, from: string, to: string, signal: AbortSignal): Promise<Overview> {
  const query = { from, to, granularity: range.granularity, timezone: range.timezone, campaignId: filters.campaignId, source: filters.source };
  const body = filters.linkId
    ? await unwrap(api.GET('/analytics/{linkId}', { params: { path: { linkId: filters.linkId }, query }, signal }))
    : await unwrap(api.GET('/analytics', { params: { query }, signal }));
  return body.data;
}

/**
 * KPIs with their change against the previous period, the time series, and
 * the breakdowns, for the workspace (overview) or one link (link page).
 */
export function AnalyticsPanel({ range, filters }: { range: Range; filters: OverviewFilters }) {
  const key = JSON.stringify([range, filters]);
  // The period and the one before it load apart: the figures show as soon as
  // theirs arrive, the changes against the previous period when it follows.
  const loaded = useLoad((signal) => loadOverview(range, filters, range.from, range.to, signal), [key]);
  const previous = useLoad((signal) => loadOverview(range, filters, range.previousFrom, range.previousTo, signal), [key]);
  const series = useMemo<Series[] | null>(() => {
    const ts = loaded.data?.timeSeries;
    if (!ts) return null;
    return [
      { label: 'Clicks', values: ts.map((p) => p.clicks), color: '--series-1' },
      { label: 'Unique clicks', values: ts.map((p) => p.uniqueClicks), color: '--series-2' },
      { label: 'Conversions', values: ts.map((p) => p.conversions), color: '--series-3' },
    ];
  }, [loaded.data]);
  const dates = useMemo(() => loaded.data?.timeSeries.map((p) => p.date) ?? [], [loaded.data]);

  if (loaded.error && !loaded.data) return <ErrorBox error={loaded.error} onRetry={loaded.reload} />;
  if (!loaded.data) return <p class="loading" aria-live="polite">Loading analytics…</p>;
  const now = loaded.data;
  const s = now.summary;
  // Shown only when it belongs to the same query as the figures.
  const p = previous.loading ? undefined : previous.data?.summary;
  const clickLogQuery = { linkId: filters.linkId, campaignId: filters.campaignId, from: range.from, to: range.to };

  return (
    <div class="analytics" aria-busy={loaded.loading ? 'true' : 'false'} data-loaded-key={loaded.loading ? '' : key}>
      {loaded.error && <ErrorBox error={loaded.error} onRetry={loaded.reload} />}
      <Kpis
        comparedTo={`${range.previousFrom} to ${range.previousTo}`}
        items={[
          { label: 'Clicks', value: s.totalClicks, previous: p?.totalClicks, format: fmtInt },
          { label: 'Unique clicks', value: s.uniqueClicks, previous: p?.uniqueClicks, format: fmtInt },
          { label: 'Conversions', value: s.conversions, previous: p?.conversions, format: fmtInt },
          { label: 'Revenue', value: s.revenue, previous: p?.revenue, format: fmtMoney },
          { label: 'Conversion rate', value: s.conversionRate, previous: p?.conversionRate, format: fmtPercent },
        ]}
      />
      {series && <TimeChart title={`Clicks by ${range.granularity}, ${range.from} to ${range.to} (${range.timezone})`} dates={dates} series={series} />}
      <div class="cards">
        <BreakdownCard
          id="countries"
          title="Countries"
          countLabel="Clicks"
          selectLabel="Show the clicks from"
          rows={now.countries.map((c) => ({ value: c.country, label: countryName(c.country), count: c.clicks, href: href('clicks', { ...clickLogQuery, country: c.country }) }))}
        />
        <BreakdownCard
          id="devices"
          title="Devices"
          countLabel="Share"
          rows={(['desktop', 'mobile', 'tablet'] as const)
            .map((d) => ({ value: d, label: d[0]!.toUpperCase() + d.slice(1), count: now.devices[d], display: `${now.devices[d]} %`, href: href('clicks', { ...clickLogQuery, device: d }) }))
            .filter((r) => r.count > 0)}
        />
        {!filters.linkId && (
          <BreakdownCard
            id="top-links"
            title="Top links"
            countLabel="Clicks"
            rows={now.topLinks.map((l) => ({ value: l.linkId, label: `/${l.shortCode}`, count: l.clicks, href: href(`links/${l.linkId}`) }))}
          />
        )}
      </div>
    </div>
  );
}
