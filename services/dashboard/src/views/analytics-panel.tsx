import { useEffect, useMemo, useRef } from 'preact/hooks';
import { api, unwrap, type Dimension, type Overview } from '../api.ts';
import { breakdownGroups } from '../breakdown-groups.ts';
import { BreakdownTabs, BreakdownTabsPending } from '../components/breakdown-tabs.tsx';
import { ErrorBox } from '../components/error-box.tsx';
import { announce } from '../components/status-region.tsx';
import { describeFilters } from '../filters.ts';
import { GeoAttribution } from '../components/geo-attribution.tsx';
import { RealtimePending, RealtimeStrip } from '../components/realtime-strip.tsx';
import { Kpis, type Kpi } from '../components/kpis.tsx';
import { rangeWords, type Range } from '../components/range-controls.tsx';
import { LegendFrame, TimeChart, type Series } from '../components/time-chart.tsx';
import { fmtInt, fmtMoney, fmtPercent } from '../format.ts';
import type { Location } from '../router.ts';
import { useLoad } from '../use-load.ts';
import { hourBucketStart, localToInstant } from '../hour-bucket-start.ts';

/** Scope and filters of a report, named as the analytics API names its parameters. */
export interface OverviewFilters {
  campaignId?: string | undefined;
  linkId?: string | undefined;
  dimensions: Partial<Record<Dimension, string>>;
}

async function loadOverview(range: Range, filters: OverviewFilters, signal: AbortSignal): Promise<Overview> {
  const query = { from: range.from, to: range.to, granularity: range.granularity, timezone: range.timezone, campaignId: filters.campaignId, compare: 'previous' as const, ...filters.dimensions };
  const body = filters.linkId
    ? await unwrap(api.GET('/analytics/{linkId}', { params: { path: { linkId: filters.linkId }, query }, signal }))
    : await unwrap(api.GET('/analytics', { params: { query }, signal }));
  return body.data;
}

/**
 * KPIs with their change against the previous period (one request: compare=previous),
 * the time series, and a card per group of dimensions, for the workspace
 * (overview) or one link (link page). Every filter applies to all of it.
 */
export function AnalyticsPanel({ range, filters, loc, realtime = false }: { range: Range; filters: OverviewFilters; loc: Location; realtime?: boolean }) {
  const key = JSON.stringify([range, filters]);
  const loaded = useLoad((signal) => loadOverview(range, filters, signal), [key]);
  const series = useMemo<Series[] | null>(() => {
    const ts = loaded.data?.timeSeries;
    if (!ts) return null;
    // Buckets not begun yet (a range ending today, or later) have no figures, not zeros:
    // a line dropping to 0 after the current hour reads as traffic that stopped.
    const now = Date.now();
    const future = ts.map((p) => localToInstant(hourBucketStart(p.date, range.timezone), range.timezone) > now);
    const values = (pick: (p: Overview['timeSeries'][number]) => number) => ts.map((p, i) => (future[i] ? null : pick(p)));
    const [clicks, unique, conversions, previousClicks] = chartSeries;
    const shown: Series[] = [
      { ...clicks, values: values((p) => p.clicks) },
      { ...unique, values: values((p) => p.uniqueClicks) },
      { ...conversions, values: values((p) => p.conversions) },
    ];
    // The previous period's clicks bucket by bucket (its first beside the range's first), as
    // Plausible's comparison line: the same length, so the same buckets but for a week or month
    // cut by the range's ends, or an hour a DST change adds; a bucket it lacks has no figure.
    const previous = loaded.data?.previous?.timeSeries;
    if (previous) shown.push({ ...previousClicks, values: ts.map((_, i) => previous[i]?.clicks ?? null), noFigure: 'no such bucket in the previous period' });
    return shown;
  }, [loaded.data]);
  const dates = useMemo(() => loaded.data?.timeSeries.map((p) => p.date) ?? [], [loaded.data]);
  const scope = { from: range.from, to: range.to, timezone: range.timezone, campaignId: filters.campaignId, linkId: filters.linkId, ...filters.dimensions };
  // What the figures on screen answer, kept until the next answer: the cards and the strip
  // follow a change once the figures have answered (the embedded ClickHouse runs one
  // statement at a time, and the figures come first), and while the next range loads the
  // chart's caption names the data it shows, never the range asked for.
  const shown = useRef({ scope, range });
  if (!loaded.loading) shown.current = { scope, range };
  const { scope: shownScope, range: shownRange } = shown.current;

  // A filter added or taken away reloads the figures in place: once they have
  // answered, the polite status region says what they now show (WCAG 4.1.3).
  // Not on the first load: the page itself says that.
  const filterWords = describeFilters(filters.dimensions);
  const announced = useRef<string | null>(null);
  useEffect(() => {
    if (loaded.loading || !loaded.data) return;
    if (announced.current !== null && announced.current !== filterWords) announce(filterWords ? `Showing clicks for ${filterWords}` : 'Filters cleared');
    announced.current = filterWords;
  }, [loaded.loading, filterWords]);

  if (loaded.error && !loaded.data) return <ErrorBox error={loaded.error} onRetry={loaded.reload} />;
  if (!loaded.data) return <AnalyticsPending realtime={realtime} range={range} />;
  const now = loaded.data;

  return (
    <div class="analytics" aria-busy={loaded.loading ? 'true' : 'false'} data-loaded-key={loaded.loading ? '' : key}>
      {/* The figures below answer the last query until the next answers: said on screen, and dimmed (styles.css). aria-busy says it to assistive technology. */}
      {loaded.loading && (
        <p class="updating" aria-hidden="true" data-updating>
          Updating…
        </p>
      )}
      {loaded.error && <ErrorBox error={loaded.error} onRetry={loaded.reload} />}
      {/* After the figures: the embedded ClickHouse answers one statement at a time, so the KPIs go first. */}
      {realtime && <RealtimeStrip scope={{ ...shownScope, from: undefined, to: undefined, timezone: undefined }} timeZone={shownRange.timezone} />}
      <Kpis comparedTo={now.previous ? `${now.previous.from} to ${now.previous.to}` : undefined} items={kpiItems(now.summary, now.previous?.summary)} />
      {series && <TimeChart title={chartTitle(shownRange)} dates={dates} series={series} granularity={shownRange.granularity} timeZone={shownRange.timezone} />}
      <div class="cards">
        {breakdownGroups.map((g) => (
          <BreakdownTabs key={g.id} group={g} scope={shownScope} selected={(loc.query.get(`by_${g.id}`) as Dimension | null) ?? undefined} />
        ))}
      </div>
      {/* Locations, the realtime strip's countries and country filters are DB-IP data. */}
      <GeoAttribution />
    </div>
  );
}

type Summary = Overview['summary'];

/** The chart's lines, in the order drawn; the last is drawn when the answer has the previous period (always asked: compare=previous). */
const chartSeries = [
  { label: 'Clicks', color: '--series-1' },
  { label: 'Unique clicks', color: '--series-2' },
  { label: 'Conversions', color: '--series-3' },
  { label: 'Clicks, previous period', color: '--muted', dashed: true },
] as const;

const chartTitle = (range: Range) => `Clicks by ${range.granularity}, ${rangeWords(range)} (${range.timezone})`;

/** The headline figures, with their changes against `previous` (none given: the frame of figures still loading). */
function kpiItems(s: Summary | undefined, p: Summary | undefined): Kpi[] {
  return [
    { label: 'Clicks', value: s?.totalClicks, previous: p?.totalClicks, format: fmtInt },
    { label: 'Unique clicks', value: s?.uniqueClicks, previous: p?.uniqueClicks, format: fmtInt },
    { label: 'Conversions', value: s?.conversions, previous: p?.conversions, format: fmtInt },
    // No exchange rates are fetched: the sum is of values as sent (the conversions view splits it by currency).
    { label: 'Revenue', value: s?.revenue, previous: p?.revenue, format: fmtMoney, note: 'all currencies added as sent' },
    // conversions ÷ clicks (DESIGN): several conversions of one click can take it past 100 %;
    // the experiments table's rate is converted clicks ÷ clicks.
    { label: 'Conversion rate', value: s?.conversionRate, previous: p?.conversionRate, format: fmtPercent, note: 'conversions per 100 clicks' },
  ];
}

/**
 * The panel's boxes while its first figures load, each where and about as tall as it
 * will be: a one-line "Loading" grew into the whole panel when they landed, moving every
 * section below it (on a link page, its rules and QR codes) under the reader's pointer.
 * Cumulative layout shift of a link page whose analytics answer last, in chromium at
 * 1280x900: 0.35 ("poor" is over 0.25) with that line; 0 with this and the header's quota
 * line holding its place too (app.tsx), checked by dashboard-looks.int.
 */
function AnalyticsPending({ realtime, range }: { realtime: boolean; range: Range }) {
  return (
    // Not dimmed as figures being replaced are (styles.css): there are none, and dimmed text fails contrast.
    <div class="analytics analytics-pending" aria-busy="true" data-loaded-key="">
      {realtime && <RealtimePending />}
      <Kpis items={kpiItems(undefined, undefined)} />
      <figure class="chart">
        {/* The chart's own caption, which the range gives before the figures: as many lines as it will have (it wraps on a phone). */}
        <figcaption>{chartTitle(range)}</figcaption>
        <div class="chart-canvas chart-pending">
          <p class="muted" aria-live="polite">
            Loading analytics…
          </p>
        </div>
        <LegendFrame series={chartSeries} />
        {/* Where "Show as a table" will be. */}
        <p class="chart-table-pending" aria-hidden="true">
          &nbsp;
        </p>
      </figure>
      <div class="cards">
        {breakdownGroups.map((g) => (
          <BreakdownTabsPending key={g.id} group={g} />
        ))}
      </div>
      <GeoAttribution />
    </div>
  );
}
