import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure, api, downloadCsv, unwrap } from '../api.ts';
import { FilterChips } from '../components/filter-chips.tsx';
import { filtersFrom } from '../filters.ts';
import { ErrorBox } from '../components/error-box.tsx';
import { GeoAttribution } from '../components/geo-attribution.tsx';
import { Pager } from '../components/pager.tsx';
import { countryName, fmtDateTime } from '../format.ts';
import { pageOf, setQuery, type Location } from '../router.ts';
import { useLoad } from '../use-load.ts';
import { TableScroll } from '../components/table-scroll.tsx';

const LIVE_INTERVAL_MS = 5_000;

/**
 * The instant a calendar day starts in the browser's zone, as the API takes it. The click
 * log reads a bare date as a UTC day; every other view shows days in the browser's zone,
 * so the log's From/To pickers do too (`to` is exclusive: the start of the next day).
 */
function localDayStart(date: string, plusDays = 0): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return new Date(y, m - 1, d + plusDays).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
const isDate = (value: string | undefined): value is string => value !== undefined && /^\d{4}-\d{2}-\d{2}$/.test(value);

export function ClicksView({ loc }: { loc: Location }) {
  const q = loc.query;
  const filters = {
    ...filtersFrom(q),
    linkId: q.get('linkId') || undefined,
    campaignId: q.get('campaignId') || undefined,
    from: q.get('from') || undefined,
    to: q.get('to') || undefined,
  };
  const page = pageOf(q);
  const live = q.get('live') === '1';
  const key = JSON.stringify([filters, page]);
  /** What the API is asked: the pickers' days as the instants they start and end in this zone. */
  const asked = {
    ...filters,
    from: isDate(filters.from) ? localDayStart(filters.from) : filters.from,
    to: isDate(filters.to) ? localDayStart(filters.to, 1) : filters.to,
  };
  const clicks = useLoad((signal) => unwrap(api.GET('/analytics/clicks', { params: { query: { ...asked, page, limit: 50 } }, signal })), [key]);
  const seen = useRef<Set<string>>(new Set());
  const [fresh, setFresh] = useState<Set<string>>(new Set());
  const [exporting, setExporting] = useState<string | null>(null);
  const [exportError, setExportError] = useState<ApiFailure | undefined>();

  // Live mode polls the first page; rows not seen before are marked new.
  useEffect(() => {
    if (!live || page !== 1) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') clicks.reload();
    }, LIVE_INTERVAL_MS);
    return () => clearInterval(timer);
  }, [live, page, clicks.reload]);
  useEffect(() => {
    const rows = clicks.data?.data ?? [];
    const first = seen.current.size === 0;
    setFresh(new Set(first ? [] : rows.filter((r) => !seen.current.has(r.clickId)).map((r) => r.clickId)));
    rows.forEach((r) => seen.current.add(r.clickId));
  }, [clicks.data]);

  /** The API streams every row of the filtered log as CSV (format=csv), however many. */
  async function exportCsv() {
    setExportError(undefined);
    setExporting('Exporting…');
    try {
      await downloadCsv('/analytics/clicks', asked);
    } catch (err) {
      if (err instanceof ApiFailure) setExportError(err);
      else throw err;
    } finally {
      setExporting(null);
    }
  }

  const filterField = (name: 'linkId' | 'campaignId' | 'country' | 'from' | 'to', label: string, type = 'text') => (
    <label>
      {label}{' '}
      <input
        name={name}
        type={type as 'text'}
        value={filters[name] ?? ''}
        size={type === 'text' ? 14 : undefined}
        onChange={(e) => setQuery({ [name]: e.currentTarget.value.trim() || undefined })}
      />
    </label>
  );

  return (
    <>
      <header class="view-header">
        <h1>Click log</h1>
        <div class="row-actions">
          <label class="toggle">
            <input type="checkbox" checked={live} onChange={(e) => setQuery({ live: e.currentTarget.checked ? '1' : undefined, page: undefined })} /> Live (every 5 s)
          </label>
          <button type="button" onClick={exportCsv} disabled={exporting !== null}>
            {exporting ?? 'Export CSV'}
          </button>
        </div>
      </header>
      <form class="filters" aria-label="Click log filters" onSubmit={(e) => e.preventDefault()}>
        {filterField('linkId', 'Link id')}
        {filterField('campaignId', 'Campaign id')}
        {filterField('country', 'Country codes')}
        <label>
          Device{' '}
          <select value={filters.device ?? ''} onChange={(e) => setQuery({ device: e.currentTarget.value || undefined })}>
            <option value="">Any</option>
            <option value="desktop">Desktop</option>
            <option value="mobile">Mobile</option>
            <option value="tablet">Tablet</option>
          </select>
        </label>
        {filterField('from', 'From', 'date')}
        {filterField('to', 'To', 'date')}
      </form>
      <FilterChips loc={loc} />
      <p class="muted">Newest first, bots excluded; days are in your time zone ({Intl.DateTimeFormat().resolvedOptions().timeZone}). The CSV export holds every click the filters keep.</p>
      {exportError && <ErrorBox error={exportError} />}
      {clicks.error && <ErrorBox error={clicks.error} onRetry={clicks.reload} />}
      {!clicks.data && !clicks.error && <p class="loading">Loading clicks…</p>}
      {clicks.data && (
        <>
          <p class="total" aria-live="polite">
            <span data-total>{(clicks.data.pagination?.total ?? 0).toLocaleString()}</span> clicks
          </p>
          <TableScroll label={'Clicks, newest first'}>
            <table class="clicks-table">
              <caption class="visually-hidden">Clicks, newest first</caption>
              <thead>
                <tr>
                  <th scope="col">Time</th>
                  <th scope="col">Link</th>
                  <th scope="col">Country</th>
                  <th scope="col">Device</th>
                  <th scope="col">OS</th>
                  <th scope="col">Browser</th>
                  <th scope="col">Referrer</th>
                  <th scope="col">UTM source</th>
                  <th scope="col">Source</th>
                </tr>
              </thead>
              <tbody>
                {clicks.data.data.length === 0 && (
                  <tr>
                    <td colSpan={9} class="muted">
                      No clicks match.
                    </td>
                  </tr>
                )}
                {clicks.data.data.map((c) => (
                  <tr key={c.clickId} class={fresh.has(c.clickId) ? 'fresh' : ''}>
                    <td>{fmtDateTime(c.timestamp)}</td>
                    <td>
                      <code>{c.linkId}</code>
                    </td>
                    <td>{countryName(c.country)}</td>
                    <td>{c.device}</td>
                    <td>{c.os ?? ''}</td>
                    <td>{c.browser ?? ''}</td>
                    <td>{c.referrerHost ?? ''}</td>
                    <td>{c.utmSource ?? ''}</td>
                    <td>{c.source}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
          <Pager pagination={clicks.data.pagination} label="clicks" />
          <GeoAttribution />
        </>
      )}
    </>
  );
}
