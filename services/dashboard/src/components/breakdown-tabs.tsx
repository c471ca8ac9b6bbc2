import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure, api, downloadCsv, unwrap, type Dimension } from '../api.ts';
import { addFilter, dimensionLabels, filterValueOf, filterValues, NONE, noteLabels, removeFilter, rowLabel, seenLabels, valueLabel } from '../filters.ts';
import { joinFilterValues } from '../../../../shared/schemas/filter-values.ts';
import { fmtInt } from '../format.ts';
import { setQuery } from '../router.ts';
import { useLoad } from '../use-load.ts';
import { BreakdownCard, type BreakdownRow } from './breakdown-card.tsx';
import type { BreakdownGroup } from '../breakdown-groups.ts';
import { ErrorBox } from './error-box.tsx';
import { linkPageHref } from './link-name.tsx';
import { session } from '../session.ts';

export type BreakdownScope = Record<string, string | undefined>;

/**
 * A deleted link's row says so (its clicks stay in reports), with the way to its page, which
 * the links list no longer has; for a key that may open link pages (links:read) only.
 */
function deletedLinkMarker(linkId: string, code: string): NonNullable<BreakdownRow['marker']> {
  return { text: 'deleted', name: `Deleted link ${code}: open its page`, href: session.can('links:read') ? linkPageHref(linkId) : undefined };
}

/** The rows a card asks for: its top values by clicks. */
const CARD_LIMIT = 10;

/**
 * One card: the selected dimension's top 10 by clicks; a row adds its value as a filter.
 * A card is a facet: it shows its dimension under every filter but its own, the chosen
 * values marked, so another value can be added (OR within a dimension) and a chosen one
 * taken away where it is listed. Filtered by its own dimension it would list only the
 * chosen values, leaving nothing else to choose.
 */
export function BreakdownTabs({ group, scope, selected }: { group: BreakdownGroup; scope: BreakdownScope; selected: Dimension | undefined }) {
  const dimension = selected && group.dimensions.includes(selected) ? selected : group.dimensions[0]!;
  const chosen = new Set(filterValues(dimension, scope[dimension]));
  const cardScope: BreakdownScope = { ...scope, [dimension]: undefined };
  const key = JSON.stringify([dimension, cardScope]);
  const rows = useLoad((signal) => unwrap(api.GET('/analytics/breakdown', { params: { query: { ...cardScope, dimension, limit: CARD_LIMIT } }, signal })), [key]);
  const [exportError, setExportError] = useState<ApiFailure | undefined>();

  const data = rows.data?.data ?? [];
  // The card asks for one page (CARD_LIMIT); `total` counts every value under the other
  // filters. A chosen value the page lacks is still listed, chosen, so the card shows
  // that its filter is on and it can be taken away there: when the page holds every
  // value, it had no click (nor conversion), at 0; beside a page of more, it may be past
  // the top values, so those chosen are asked for by themselves (one more request, only
  // then), at their counts, or 0 when the answer lacks them too.
  const complete = rows.data !== undefined && rows.data.pagination.total <= data.length;
  const onPage = new Set(data.map((r) => filterValueOf(r.value)));
  // What the past-page request asks, set once the page for these filters has answered and
  // kept while the next loads (not asked beside the last filters' page; its rows stay on
  // screen meanwhile, as the page's own do). Fewer values under the same filters (one taken
  // away) are answered already: not asked again.
  const asked = useRef<{ key: string; scope: BreakdownScope; values: string[] }>({ key: '', scope: {}, values: [] });
  if (rows.data !== undefined && !rows.loading) {
    const values = complete ? [] : [...chosen].filter((value) => !onPage.has(value));
    const answered = asked.current.key === key && values.every((v) => asked.current.values.includes(v));
    if (!answered || values.length === 0) asked.current = { key, scope: cardScope, values };
  }
  const pastPage = asked.current;
  const chosenRows = useLoad(
    (signal) =>
      pastPage.values.length === 0
        ? Promise.resolve(undefined)
        : // Up to 1,000: under a filter on `tag`, the links' other tags come too, possibly ahead of the chosen ones.
          unwrap(api.GET('/analytics/breakdown', { params: { query: { ...pastPage.scope, dimension, [dimension]: joinFilterValues(pastPage.values), limit: 1000 } }, signal })),
    // Nothing to ask: one key for all, so a card without such values never loads (nor dims) again for it.
    pastPage.values.length === 0 ? [] : [pastPage.key, pastPage.values.join('\n')],
  );
  const askingPastPage = pastPage.values.length > 0 && chosenRows.loading;
  // Only values asked for and chosen still (one taken away goes at once, as its chip does).
  const asPastPage = (value: string) => pastPage.values.includes(value) && chosen.has(value) && !onPage.has(value);
  const beyond = chosenRows.data?.data.filter((r) => asPastPage(filterValueOf(r.value))) ?? [];
  useEffect(() => noteLabels(dimension, [...data, ...beyond]), [rows.data, chosenRows.data, dimension]);
  const apiRow = (r: (typeof data)[number], pastPageRow: boolean): BreakdownRow => ({
    value: filterValueOf(r.value),
    label: rowLabel(dimension, r),
    count: r.clicks,
    title: `${fmtInt(r.clicks)} clicks, ${fmtInt(r.uniqueClicks)} unique, ${fmtInt(r.conversions)} conversions (${r.conversionRate.toFixed(2)} %)`,
    ...(r.deleted && r.value !== null ? { marker: deletedLinkMarker(r.value, rowLabel(dimension, r)) } : {}),
    ...(pastPageRow ? { pastPage: true } : {}),
  });
  const apiRows = [...data.map((r) => apiRow(r, false)), ...beyond.map((r) => apiRow(r, true))];
  const listed = new Set(apiRows.map((r) => r.value));
  // Each chosen value's count is known once the page holds them all, or the chosen past it have answered.
  const countsKnown = complete || (pastPage.values.length > 0 && chosenRows.data !== undefined && !chosenRows.loading);
  const unmatched: BreakdownRow[] = countsKnown
    ? [...chosen].filter((value) => !listed.has(value)).map((value) => ({ value, label: valueLabel(dimension, value, seenLabels), count: 0, unmatched: true }))
    : [];
  const cardRows = [...apiRows, ...unmatched];

  return (
    <div class="breakdown-group" data-group={group.id} data-dimension={dimension} data-loaded={rows.loading || askingPastPage ? 'false' : 'true'}>
      {rows.error && <ErrorBox error={rows.error} onRetry={rows.reload} />}
      {chosenRows.error && <ErrorBox error={chosenRows.error} onRetry={chosenRows.reload} />}
      {exportError && <ErrorBox error={exportError} />}
      <BreakdownCard
        id={`bd-${group.id}`}
        title={cardTitle(group, dimension)}
        header={<DimensionTabs group={group} dimension={dimension} choose={(d) => setQuery({ [`by_${group.id}`]: d === group.dimensions[0] ? undefined : d }, { replace: true })} />}
        columnLabel={dimensionLabels[dimension]}
        countLabel="Clicks"
        selectLabel="Filter by"
        chosen={chosen}
        loading={!rows.data}
        onSelect={(row) => (chosen.has(row.value ?? NONE) ? removeFilter(dimension, row.value ?? NONE) : addFilter(dimension, row.value))}
        rows={cardRows}
        footer={<CsvButton dimension={dimension} download={() => downloadCsv('/analytics/breakdown', { ...cardScope, dimension }).catch((err: unknown) => (err instanceof ApiFailure ? setExportError(err) : Promise.reject(err)))} />}
      />
    </div>
  );
}

/** A card's export of its dimension under its filters; without `download` (the scope not known yet), shown disabled. */
function CsvButton({ dimension, download }: { dimension: Dimension; download?: () => void }) {
  return (
    <button type="button" class="linkish" disabled={!download} onClick={download}>
      CSV of {dimensionLabels[dimension].toLowerCase()}
    </button>
  );
}

const cardTitle = (group: BreakdownGroup, dimension: Dimension) => (group.dimensions.length > 1 ? group.title : dimensionLabels[dimension]);

/** A group's tab per dimension (none for a group of one); without `choose`, shown disabled. */
function DimensionTabs({ group, dimension, choose }: { group: BreakdownGroup; dimension: Dimension; choose?: (d: Dimension) => void }) {
  if (group.dimensions.length < 2) return null;
  return (
    <div class="tabs" role="group" aria-label={`${group.title}: show by`}>
      {group.dimensions.map((d) => (
        <button key={d} type="button" aria-pressed={d === dimension} disabled={!choose} onClick={() => choose?.(d)}>
          {dimensionLabels[d]}
        </button>
      ))}
    </div>
  );
}

/** A group's card before its scope is known (the figures above it load first), with its title and tabs, so it takes its place from the start. */
export function BreakdownTabsPending({ group }: { group: BreakdownGroup }) {
  return (
    <div class="breakdown-group" data-group={group.id} data-loaded="false">
      <section class="card breakdown">
        <h2>{cardTitle(group, group.dimensions[0]!)}</h2>
        <DimensionTabs group={group} dimension={group.dimensions[0]!} />
        <div class="breakdown-rows">
          <p class="muted">Loading…</p>
        </div>
        <CsvButton dimension={group.dimensions[0]!} />
      </section>
    </div>
  );
}
