import { useEffect, useState } from 'preact/hooks';
import type { Dimension } from './api.ts';
import { countryName, deletedLinkName, shortLinkName } from './format.ts';
import { setQuery } from './router.ts';
import { changes } from './changes.ts';
import { filterValueOf, joinFilterValues, LITERAL_NONE, NONE, spellFilterValue, splitFilterValues } from '../../../shared/schemas/filter-values.ts';

/**
 * The analytics filters as the URL holds them: one query parameter per
 * dimension, named as the API names it, values comma-separated (OR within a
 * dimension, AND across; a comma in a value escaped, filter-values.ts), "(none)"
 * for the empty value. The URL is the state, so
 * a filtered view is a link to share. Values are read as the API spells them
 * (`country=de` is the row `DE`), so one typed in another case is still its row.
 */
export { filterValueOf, NONE };

export const dimensionLabels: Record<Dimension, string> = {
  country: 'Country',
  region: 'Region',
  city: 'City',
  device: 'Device',
  os: 'OS',
  browser: 'Browser',
  referrer: 'Referrer',
  utm_source: 'UTM source',
  utm_medium: 'UTM medium',
  utm_campaign: 'UTM campaign',
  utm_term: 'UTM term',
  utm_content: 'UTM content',
  source: 'Source',
  link: 'Link',
  campaign: 'Campaign',
  rule: 'Rule',
  destination: 'Destination',
  tag: 'Tag',
};

export const dimensions = Object.keys(dimensionLabels) as Dimension[];

/** The values of a dimension's filter parameter, spelled as the API spells them, each once. */
export function filterValues(dimension: string, raw: string | null | undefined): string[] {
  return raw ? [...new Set(splitFilterValues(raw).map((v) => spellFilterValue(dimension, v)))] : [];
}

/** Every dimension filter present in the URL, as the API takes it. */
export function filtersFrom(query: URLSearchParams): Partial<Record<Dimension, string>> {
  const out: Partial<Record<Dimension, string>> = {};
  for (const d of dimensions) {
    const v = query.get(d);
    if (v) out[d] = joinFilterValues(filterValues(d, v));
  }
  return out;
}

/**
 * Adds a value to a dimension's filter (OR with the values already there): `value` as a
 * filter names it (a breakdown row's through filterValueOf), null the empty value.
 */
export function addFilter(dimension: Dimension, value: string | null): void {
  const values = new Set(filterValues(dimension, new URLSearchParams(location.search).get(dimension)));
  values.add(value ?? NONE);
  setQuery({ [dimension]: joinFilterValues(values) });
}

/** Takes a value away from a dimension's filter, however the address spells it. */
export function removeFilter(dimension: string, value: string): void {
  const values = filterValues(dimension, new URLSearchParams(location.search).get(dimension));
  const gone = spellFilterValue(dimension, value);
  setQuery({ [dimension]: joinFilterValues(values.filter((v) => v !== gone)) || undefined });
}

/** How the text `(none)` itself (a GA-style utm_medium) shows, apart from the empty value's (none). */
const LITERAL_NONE_LABEL = '"(none)"';

export function valueLabel(dimension: Dimension, value: string, labels: Map<string, string>): string {
  if (value === NONE) return '(none)';
  if (value === LITERAL_NONE) return LITERAL_NONE_LABEL;
  if (dimension === 'country') return countryName(value);
  if (dimension === 'rule' && value === 'default') return 'Default destination';
  return labels.get(`${dimension}:${value}`) ?? value;
}

/** The filters in words, as the chips name them: "Country: Germany or France; Device: Mobile"; '' for none. */
export function describeFilters(filters: Partial<Record<Dimension, string>>): string {
  return Object.entries(filters)
    .filter((e): e is [Dimension, string] => !!e[1])
    .map(([d, raw]) => `${dimensionLabels[d]}: ${filterValues(d, raw).map((v) => valueLabel(d, v, seenLabels)).join(' or ')}`)
    .join('; ');
}

/** A breakdown row's fields that name it. */
export interface NamedRow {
  value: string | null;
  label?: string | undefined;
  shortCode?: string | undefined;
  domain?: string | undefined;
}

/**
 * A breakdown row's name on screen: (none), a country's name, a link as the dashboard
 * names links everywhere (shortLinkName; an id of no link of the workspace, with no code,
 * as the id), else the API's label.
 */
export function rowLabel(dimension: Dimension, r: NamedRow): string {
  if (r.value === null) return NONE;
  if (r.value === NONE) return LITERAL_NONE_LABEL;
  if (dimension === 'country') return countryName(r.value);
  if (dimension === 'link' && r.shortCode) return shortLinkName(r.shortCode, r.domain);
  return r.label ?? r.value;
}

/** Labels seen in breakdown rows (link short codes, campaign and rule names), for the chips. */
export const seenLabels = new Map<string, string>();
const labelChanges = changes();

/**
 * Notes the labels of a breakdown's rows, a deleted link's code marked (the code may name
 * a newer link now); those who show them (useSeenLabels) render again when one is new.
 */
export function noteLabels(dimension: Dimension, rows: ReadonlyArray<NamedRow & { deleted?: boolean | undefined }>): void {
  let changed = false;
  for (const r of rows) {
    if (r.value === null || !r.label) continue;
    const key = `${dimension}:${r.value}`;
    const label = r.deleted ? deletedLinkName(rowLabel(dimension, r)) : rowLabel(dimension, r);
    if (seenLabels.get(key) === label) continue;
    seenLabels.set(key, label);
    changed = true;
  }
  if (changed) labelChanges.emit();
}

/**
 * Renders the caller again when noteLabels learns a label: chips drawn before the cards
 * answered (a link filter in the address, on a fresh load) showed the link's id until
 * something else drew them again.
 */
export function useSeenLabels(): void {
  const [, setNoted] = useState(0);
  useEffect(() => labelChanges.subscribe(() => setNoted((n) => n + 1)), []);
}

/** Where the period, zone and filters of an analytics view can be carried. */
export type AnalyticsView = 'overview' | 'clicks' | 'conversions' | 'link';

/**
 * The query another analytics view opens with, from the one shown (Plausible
 * keeps them the same way): the period, the zone and the filters that view
 * applies. A preset goes as the preset (the click log works out its days when it
 * loads, so a live log reached from a "last 7 days" view goes on past midnight);
 * days go as days. A view that does not apply a filter does not get it (the
 * conversions view has no campaign control, so no campaign goes to it; a link's
 * page takes no link filter): a URL says what the view shows.
 */
export function carriedQuery(query: URLSearchParams, to: AnalyticsView): URLSearchParams {
  const out = new URLSearchParams();
  const copy = (name: string) => {
    const value = query.get(name);
    if (value) out.set(name, value);
  };
  copy('tz');
  copy('granularity');
  const preset = query.get('range');
  const from = query.get('from');
  const until = query.get('to');
  if (to === 'clicks') {
    copy('range');
    if (!preset || preset === 'custom') {
      copy('from');
      copy('to');
    }
  } else if (preset === 'custom' || (!preset && from && until)) {
    // Days picked in the click log are a custom period elsewhere.
    out.set('range', 'custom');
    copy('from');
    copy('to');
  } else if (preset) copy('range');
  if (to !== 'link' && to !== 'conversions') copy('campaignId');
  // A link's page is that link's own: a link filter (of other links, or of it again) would
  // leave it none of its clicks, or say nothing.
  if (to !== 'conversions') for (const d of dimensions) if (!(to === 'link' && d === 'link')) copy(d);
  return out;
}

/**
 * The query of the analytics view shown last (overview, click log, conversions, a
 * link's page), for the workspace it was shown in: its period, zone and filters go
 * along to the next analytics view, also by way of the pages in between. Another
 * workspace (signed in with another key) starts afresh: its campaigns are others.
 */
let lastAnalytics: { workspaceId: string; query: URLSearchParams } | null = null;

export function rememberAnalytics(workspaceId: string, query: URLSearchParams): void {
  lastAnalytics = { workspaceId, query };
}

/** The query `view` opens with from the last analytics view of `workspaceId` (empty if none). */
export function carriedTo(workspaceId: string, view: AnalyticsView): URLSearchParams {
  return lastAnalytics?.workspaceId === workspaceId ? carriedQuery(lastAnalytics.query, view) : new URLSearchParams();
}
