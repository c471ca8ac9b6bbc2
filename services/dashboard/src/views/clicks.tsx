import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { useTitle } from '../document-title.ts';
import { ApiFailure, api, downloadCsv, unwrap } from '../api.ts';
import { FilterChips } from '../components/filter-chips.tsx';
import { filtersFrom } from '../filters.ts';
import { ErrorBox } from '../components/error-box.tsx';
import { GeoAttribution } from '../components/geo-attribution.tsx';
import { Pager } from '../components/pager.tsx';
import { countryName, fmtDateTime } from '../format.ts';
import { pageOf, setQuery, type Location } from '../router.ts';
import { rangeDays, rangeFrom, reportZone } from '../components/range-controls.tsx';
import { useLoad } from '../use-load.ts';
import { TableScroll } from '../components/table-scroll.tsx';
import { useQuerySelect } from '../query-select.ts';
import { DateInput } from '../components/date-input.tsx';
import { usePoll } from '../use-poll.ts';
import { LinkName, linkNamesOf } from '../components/link-name.tsx';
import { PollPaused } from '../components/poll-paused.tsx';

const LIVE_INTERVAL_MS = 5_000;

const isDate = (value: string | undefined): value is string => value !== undefined && /^\d{4}-\d{2}-\d{2}$/.test(value);

/** A typed list (`DE, AT`) as the API takes it: comma-separated, no blanks. */
const listValue = (typed: string) =>
  typed
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .join(',') || undefined;

/** The From and To days of the log: the URL's, else those of a preset it carries (not custom), else none (the API's default). */
function presetDays(q: URLSearchParams): { from: string | undefined; to: string | undefined } {
  const from = q.get('from') || undefined;
  const to = q.get('to') || undefined;
  const preset = q.get('range');
  if (from || to || !preset || preset === 'custom') return { from, to };
  return rangeDays(rangeFrom(q));
}

export function ClicksView({ loc }: { loc: Location }) {
  useTitle('Click log');
  const q = loc.query;
  const filters = {
    ...filtersFrom(q),
    linkId: q.get('linkId') || undefined,
    campaignId: q.get('campaignId') || undefined,
    // Days, or a preset's days worked out now (the overview's "last 7 days" carried here):
    // a live log opened so goes on past midnight, where fixed days would end.
    ...presetDays(q),
  };
  const page = pageOf(q);
  const live = q.get('live') === '1';
  // The pickers' days are days in the report's zone, as on every other view (the API reads them so with `timezone`).
  const timezone = reportZone(q);
  const key = JSON.stringify([filters, page, timezone]);
  const asked = { ...filters, timezone };
  const knownNames = useRef(new Map<string, string | null>());
  const clicks = useLoad(async (signal) => {
    const log = await unwrap(api.GET('/analytics/clicks', { params: { query: { ...asked, page, limit: 50 } }, signal }));
    return { ...log, linkNames: await linkNamesOf(log.data.map((c) => c.linkId), knownNames.current, signal) };
  }, [key]);
  const seen = useRef<Set<string>>(new Set());
  const [fresh, setFresh] = useState<Set<string>>(new Set());
  const [exporting, setExporting] = useState<string | null>(null);
  const [exportError, setExportError] = useState<ApiFailure | undefined>();
  const deviceSelect = useQuerySelect('device', filters.device ?? '');

  // Live mode polls the first page (while visible and the quota allows); rows not seen before are marked new.
  const livePaused = usePoll(clicks.reload, LIVE_INTERVAL_MS, { enabled: live && page === 1, busy: clicks.loading });
  // Only a live poll marks rows: another filter or page shows other rows, none of them new.
  const seenKey = useRef(key);
  useEffect(() => {
    const rows = clicks.data?.data ?? [];
    const polled = live && seenKey.current === key && seen.current.size > 0;
    if (seenKey.current !== key) {
      seenKey.current = key;
      seen.current = new Set();
    }
    setFresh(new Set(polled ? rows.filter((r) => !seen.current.has(r.clickId)).map((r) => r.clickId) : []));
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

  // Labels beside their fields (for/id), as on every other view.
  const filterField = (name: 'linkId' | 'campaignId' | 'country', label: string) => (
    <span class="inline-field">
      <label for={`clicks-${name}`}>{label}</label>
      <DraftField id={`clicks-${name}`} name={name} committed={filters[name] ?? ''} commit={(value) => {
        // Countries are a list (OR); a link or campaign id is one id, as the API takes it
        // (a list joined into one would match nothing, silently; as typed, the API says why).
        const normalised = name === 'country' ? listValue(value) : value.trim() || undefined;
        setQuery({ [name]: normalised });
        return normalised ?? '';
      }} />
    </span>
  );
  /** From is at most To and To at least From, as the API wants them. */
  const dateField = (name: 'from' | 'to', label: string) => (
    <span class="inline-field">
      <label for={`clicks-${name}`}>{label}</label>
      {/* Days picked here are a custom period: the overview, reached from here, shows them too (a preset would not). */}
      <DateInput
        id={`clicks-${name}`}
        name={name}
        value={filters[name] ?? ''}
        min={name === 'to' && isDate(filters.from) ? filters.from : undefined}
        max={name === 'from' && isDate(filters.to) ? filters.to : undefined}
        clearable
        // Both days go: a preset's other day, shown but not in the URL, stays as shown (alone,
        // the custom range would lose it: the log unbounded on that side, the overview 30 days).
        commit={(value, first) => setQuery({ from: filters.from, to: filters.to, [name]: value || undefined, range: q.get('range') ? 'custom' : undefined }, { replace: !first })}
      />
    </span>
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
        <span class="inline-field">
          <label for="clicks-device">Device</label>
          <select id="clicks-device" {...deviceSelect}>
            <option value="">Any</option>
            <option value="desktop">Desktop</option>
            <option value="mobile">Mobile</option>
            <option value="tablet">Tablet</option>
          </select>
        </span>
        {dateField('from', 'From')}
        {dateField('to', 'To')}
      </form>
      <FilterChips loc={loc} />
      <p class="muted">Newest first, bots excluded; From and To are days in {timezone}. The CSV export holds every click the filters keep.</p>
      {live && page === 1 && livePaused && <PollPaused rate={livePaused} onRefresh={clicks.reload} />}
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
                  <th scope="col">Time ({timezone})</th>
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
                    <td>
                      {fmtDateTime(c.timestamp, timezone)}
                      {/* Said in words, not by the row's colour alone (WCAG 1.4.1). */}
                      {fresh.has(c.clickId) && <span class="badge">new</span>}
                    </td>
                    <td>
                      {/* Named and linked where the link is live, its id marked deleted and linked where it is not (see LinkName); its id alone where the key may not read links. */}
                      <LinkName id={c.linkId} names={clicks.data!.linkNames} />
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

/**
 * A text field bound to a query parameter: what is typed stays until it is committed
 * (Enter, or leaving the field), whatever re-renders the view meanwhile. Given the
 * committed value as `value`, Preact puts it back into the field at every render, so the
 * live log's refresh every 5 s (or any data arriving) wiped a filter being typed.
 */
function DraftField(props: { id: string; name: string; committed: string; commit(value: string): string }) {
  const [draft, setDraft] = useState(props.committed);
  // A new committed value (a chip removed, back and forward) replaces the draft, before paint.
  useLayoutEffect(() => setDraft(props.committed), [props.committed]);
  return (
    <input
      id={props.id}
      name={props.name}
      type="text"
      value={draft}
      size={14}
      onInput={(e) => setDraft(e.currentTarget.value)}
      // The field shows what was committed, normalised, even when that equals what it was.
      onChange={(e) => setDraft(props.commit(e.currentTarget.value))}
    />
  );
}
