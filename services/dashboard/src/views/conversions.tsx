import { useRef, useState } from 'preact/hooks';
import { useTitle } from '../document-title.ts';
import { ApiFailure, api, downloadCsv, unwrap, type ConversionEvent } from '../api.ts';
import { ErrorBox } from '../components/error-box.tsx';
import { Kpis } from '../components/kpis.tsx';
import { Pager } from '../components/pager.tsx';
import { RangeControls, rangeFrom } from '../components/range-controls.tsx';
import { fmtDateTime, fmtInt, fmtMoney, fmtPercent } from '../format.ts';
import { pageOf, setQuery, type Location } from '../router.ts';
import { useCampaignName } from '../all-pages.ts';
import { FilterChips } from '../components/filter-chips.tsx';
import { useLoad } from '../use-load.ts';
import { useQuerySelect } from '../query-select.ts';
import { TableScroll } from '../components/table-scroll.tsx';
import { LinkName, linkNamesOf } from '../components/link-name.tsx';

/** Every event the API records, from its enum: an event added to the API and not named here fails the typecheck. */
const eventNames: Record<ConversionEvent, true> = { purchase: true, signup: true, lead: true, install: true, conversion: true };
const events = Object.keys(eventNames) as ConversionEvent[];

/** SPEC 2.5: summary, events, and the records, with an event filter and CSV. */
export function ConversionsView({ loc }: { loc: Location }) {
  useTitle('Conversions');
  const range = rangeFrom(loc.query);
  const eventParam = loc.query.get('event');
  const event = (events as readonly string[]).includes(eventParam ?? '') ? (eventParam as ConversionEvent) : undefined;
  const linkId = loc.query.get('linkId') || undefined;
  const campaignId = loc.query.get('campaignId') || undefined;
  const page = pageOf(loc.query);
  const query = { from: range.from, to: range.to, timezone: range.timezone, event, linkId, campaignId };
  const knownNames = useRef(new Map<string, string | null>());
  const campaignName = useCampaignName(campaignId);
  const report = useLoad(async (signal) => {
    const answer = await unwrap(api.GET('/analytics/conversions', { params: { query: { ...query, page, limit: 50 } }, signal }));
    // The link filtered by is named too (its chip), in the same lookup as the records' links.
    const linkIds = [...(linkId ? [linkId] : []), ...answer.data.conversions.map((c) => c.linkId)];
    return { ...answer, linkNames: await linkNamesOf(linkIds, knownNames.current, signal) };
  }, [JSON.stringify(query), page]);
  const [exportError, setExportError] = useState<ApiFailure | undefined>();
  const eventSelect = useQuerySelect('event', event ?? '');

  /** The API streams every conversion record of the range as CSV (format=csv). */
  async function exportCsv() {
    setExportError(undefined);
    try {
      await downloadCsv('/analytics/conversions', query);
    } catch (err) {
      if (err instanceof ApiFailure) setExportError(err);
      else throw err;
    }
  }

  const s = report.data?.data.summary;
  // No exchange rates are fetched: with several currencies the sums add their values as sent, and only the card by currency reads true.
  const currencies = report.data?.data.byCurrency.length ?? 0;
  const mixedNote = currencies > 1 ? `${currencies} currencies added as sent: read Revenue by currency below` : undefined;
  return (
    <>
      <header class="view-header">
        <h1>Conversions</h1>
        <RangeControls range={range} />
      </header>
      <div class="filters">
        <span class="inline-field">
          <label for="conversion-event">Event</label>
          <select id="conversion-event" {...eventSelect}>
            <option value="">All events</option>
            {events.map((e) => (
              <option key={e} value={e}>
                {e}
              </option>
            ))}
          </select>
        </span>
        {/* The link by its short code, as every chip names one, and the campaign by its name; by their ids until the names load, or where they cannot be read (deleted, or a key without links:read). */}
        <FilterChips
          loc={loc}
          withDimensions={false}
          extra={[
            ...(linkId ? [{ name: 'linkId', label: `Link: ${report.data?.linkNames.get(linkId) ?? linkId}` }] : []),
            ...(campaignId ? [{ name: 'campaignId', label: `Campaign: ${campaignName}` }] : []),
          ]}
        />
        <button type="button" onClick={exportCsv}>
          Export CSV
        </button>
      </div>
      {exportError && <ErrorBox error={exportError} />}
      {report.error && <ErrorBox error={report.error} onRetry={report.reload} />}
      {!report.data && !report.error && <p class="loading">Loading conversions…</p>}
      {report.data && s && (
        <>
          <Kpis
            items={[
              { label: 'Conversions', value: s.totalConversions, format: fmtInt },
              { label: 'Revenue', value: s.totalRevenue, format: fmtMoney, note: mixedNote },
              { label: 'Average value', value: s.averageValue, format: fmtMoney, note: mixedNote },
              { label: 'Conversion rate', value: s.conversionRate, format: fmtPercent },
            ]}
          />
          <div class="cards">
            <section class="card" aria-labelledby="by-event" data-by-event>
              <h2 id="by-event">By event</h2>
              {/* In a scroll box of its own: at 200 % text and 640 px the card is narrower than the table (WCAG 1.4.10). */}
              <TableScroll label="Conversions by event">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Event</th>
                      <th scope="col" class="num">
                        Conversions
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {Object.entries(report.data.data.byEvent).map(([name, n]) => (
                      <tr key={name}>
                        <th scope="row">
                          <button type="button" class="linkish" onClick={() => setQuery({ event: name })}>
                            {name}
                          </button>
                        </th>
                        <td class="num">{fmtInt(n)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableScroll>
            </section>
            <section class="card" aria-labelledby="by-currency" data-by-currency>
              <h2 id="by-currency">Revenue by currency</h2>
              {report.data.data.byCurrency.length > 1 && <p class="muted">The revenue above adds amounts in different currencies as sent; read them here.</p>}
              <TableScroll label="Revenue by currency">
                <table>
                  <thead>
                    <tr>
                      <th scope="col">Currency</th>
                      <th scope="col" class="num">
                        Conversions
                      </th>
                      <th scope="col" class="num">
                        Revenue
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {report.data.data.byCurrency.length === 0 && (
                      <tr>
                        <td colSpan={3} class="muted">
                          No conversions.
                        </td>
                      </tr>
                    )}
                    {report.data.data.byCurrency.map((c) => (
                      <tr key={c.currency}>
                        <th scope="row">{c.currency}</th>
                        <td class="num">{fmtInt(c.conversions)}</td>
                        <td class="num">{fmtMoney(c.revenue)}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </TableScroll>
            </section>
          </div>
          <TableScroll label={'Conversion records'}>
            <table class="conversions-table">
              <caption class="visually-hidden">Conversion records</caption>
              <thead>
                <tr>
                  <th scope="col">Time ({range.timezone})</th>
                  <th scope="col">Event</th>
                  <th scope="col" class="num">
                    Value
                  </th>
                  <th scope="col">Currency</th>
                  <th scope="col">Order</th>
                  <th scope="col">Link</th>
                  <th scope="col">Click</th>
                </tr>
              </thead>
              <tbody>
                {report.data.data.conversions.length === 0 && (
                  <tr>
                    <td colSpan={7} class="muted">
                      No conversions in this range.
                    </td>
                  </tr>
                )}
                {report.data.data.conversions.map((c) => (
                  <tr key={c.conversionId} data-conversion-id={c.conversionId}>
                    <td>{fmtDateTime(c.timestamp, range.timezone)}</td>
                    <td>{c.event}</td>
                    <td class="num">{fmtMoney(c.value)}</td>
                    <td>{c.currency}</td>
                    <td>{c.orderId}</td>
                    <td>
                      <LinkName id={c.linkId} names={report.data!.linkNames} />
                    </td>
                    <td>
                      <code>{c.clickId}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
          <Pager pagination={report.data.pagination} label="conversions" />
        </>
      )}
    </>
  );
}
