import { createRequire } from 'node:module';
import countries from 'i18n-iso-countries';
import type { Sql } from '../../../shared/db/postgres.ts';
import type { Dimension, DimensionFilters } from '../../../shared/schemas/analytics-dimensions.ts';
import { operatingSystemNames, type RecordedOperatingSystem } from '../../../shared/schemas/operating-systems.ts';
import { linkLabel, linkNames } from './link-names.ts';

/**
 * Where each dimension of shared/schemas/analytics-dimensions.ts is read, and how
 * a breakdown row of it is labelled. Adding a dimension is one entry here (and
 * its declaration there) once its column exists in click_facts (clickhouse/0007):
 *
 *   - `column`: a column of click_facts (and of clicks_by_time / events for the click log),
 *     '' meaning "none";
 *   - or `linkValues`: a dimension of links kept in Postgres (tags, say): it names,
 *     per workspace, the values of each link, copied into ClickHouse (link-values.ts);
 *     filters become link id sets and a breakdown counts a click once under each value
 *     of its link.
 */
export type DimensionSource =
  | {
      kind: 'column';
      /** Column of click_facts. */
      column: string;
      /** Column of clicks_by_time and events, for the click log; absent: not in clicks_by_time, the log reads events. */
      logColumn: string | null;
      eventsColumn: string;
      /** What the stored '' means as a value (rule: 'default'); absent: null, "(none)". */
      emptyValue?: string;
      /**
       * Whether the dimension has at most a few hundred values in practice (device, os,
       * browser, source, country, referrer host, utm source, medium, campaign and
       * content): a breakdown then computes every value's uniques in the same pass as
       * its clicks. Otherwise (region, city, utm term, link, rule, destination: thousands
       * of values) a first pass counts clicks, a second the page's uniques: a sketch
       * for each of 10k values cost three times the clicks alone, a second pass over
       * the filtered clicks less. Speed only: the answer is the same either way.
       */
      fewValues?: boolean;
      label?: Labeller;
    }
  | {
      kind: 'linkValues';
      /**
       * link id -> its values (none: the link has no value, counted under null), and the
       * fingerprint of that very answer: both from one statement, so one state of the table.
       */
      linkValues(sql: Sql, workspaceId: string): Promise<{ values: Map<string, string[]>; fingerprint: string }>;
      /** A digest of linkValues' answer, cheaper to get: it changes whenever the answer does. */
      fingerprint(sql: Sql, workspaceId: string): Promise<string>;
      label?: Labeller;
    };

/** Extra fields of breakdown rows, by value (absent: no extra fields). */
export type Labeller = (sql: Sql, workspaceId: string, values: string[]) => Promise<Map<string, RowLabel>>;
export interface RowLabel {
  label?: string;
  shortCode?: string;
  domain?: string;
  deleted?: boolean;
  name?: string | null;
  type?: string | null;
}

countries.registerLocale(createRequire(import.meta.url)('i18n-iso-countries/langs/en.json'));

const countryLabel: Labeller = async (_sql, _ws, values) => new Map(values.map((v) => [v, { label: countries.getName(v, 'en') ?? v }]));
const osLabel: Labeller = async (_sql, _ws, values) => new Map(values.map((v) => [v, { label: operatingSystemNames[v as RecordedOperatingSystem] ?? v }]));

/**
 * Links by short code (`host/code` on a custom domain, which `domain` names), deleted ones
 * marked (linkNames); an id of no link of the workspace is shown as it is, with no code and
 * no `deleted`.
 */
const linkRowLabel: Labeller = async (sql, workspaceId, values) => {
  const names = await linkNames(sql, workspaceId, values);
  return new Map(
    values.map((v) => {
      const link = names.get(v);
      if (!link) return [v, { label: v, shortCode: '' }];
      return [v, { label: linkLabel(link), shortCode: link.shortCode, ...(link.domain ? { domain: link.domain } : {}), deleted: link.deleted }];
    }),
  );
};

const campaignLabel: Labeller = async (sql, workspaceId, values) => {
  const rows = await sql<{ id: string; name: string }[]>`SELECT id, name FROM campaigns WHERE workspace_id = ${workspaceId} AND id IN ${sql(values)}`;
  const names = new Map(rows.map((r) => [r.id, r.name]));
  return new Map(values.map((v) => [v, { label: names.get(v) ?? v }]));
};

/** Rules are deleted for good: a deleted rule's clicks keep its id, with no name or type. */
const ruleLabel: Labeller = async (sql, workspaceId, values) => {
  const ids = values.filter((v) => v !== 'default');
  const rows = ids.length ? await sql<{ id: string; name: string; type: string }[]>`SELECT id, name, type FROM rules WHERE workspace_id = ${workspaceId} AND id IN ${sql(ids)}` : [];
  const byId = new Map(rows.map((r) => [r.id, r]));
  return new Map(
    values.map((v) => {
      if (v === 'default') return [v, { label: 'Default destination', name: null, type: null }];
      const rule = byId.get(v);
      return [v, rule ? { label: rule.name || `${rule.type} rule`, name: rule.name, type: rule.type } : { label: `${v} (deleted)`, name: null, type: null }];
    }),
  );
};

/**
 * Tags live on links in Postgres (links.tags), not on clicks: a click counts under
 * its link's tags as they are now. Deleted links are included, their clicks being
 * history; untagged links are left out of the map (click-filter.ts reads that as
 * "(none)").
 */
/**
 * The tagged links and a 64-bit hash of each one's id and tags, summed: a tag added,
 * removed or changed anywhere changes it (up to hash collisions, ~2^-64). Not updated_at:
 * two transactions can commit in the other order than their timestamps.
 */
const tagDigest = (sql: Sql) => sql`hashtextextended(id || '|' || array_to_string(tags, ','), 0)`;
const fingerprintOf = (n: number, h: string) => `${n}:${h}`;

const linkTags = async (sql: Sql, workspaceId: string) => {
  const rows = await sql<{ id: string; tags: string[]; n: number; h: string }[]>`
    SELECT id, tags, (count(*) OVER ())::int AS n, (sum(${tagDigest(sql)}) OVER ())::text AS h
    FROM links WHERE workspace_id = ${workspaceId} AND cardinality(tags) > 0`;
  return { values: new Map(rows.map((r) => [r.id, r.tags])), fingerprint: rows[0] ? fingerprintOf(rows[0].n, rows[0].h) : fingerprintOf(0, '0') };
};

const linkTagsFingerprint = async (sql: Sql, workspaceId: string): Promise<string> => {
  const [row] = await sql<{ n: number; h: string }[]>`
    SELECT count(*)::int AS n, coalesce(sum(${tagDigest(sql)}), 0)::text AS h
    FROM links WHERE workspace_id = ${workspaceId} AND cardinality(tags) > 0`;
  return fingerprintOf(row!.n, row!.h);
};

const column = (name: string, logColumn: string | null = name, eventsColumn = logColumn ?? name): DimensionSource => ({ kind: 'column', column: name, logColumn, eventsColumn });
const few = (source: DimensionSource): DimensionSource => ({ ...source, fewValues: true }) as DimensionSource;

export const dimensionSources: Record<Dimension, DimensionSource> = {
  country: few({ ...column('country'), label: countryLabel } as DimensionSource),
  region: column('region'),
  city: column('city'),
  device: few(column('device', 'device_class')),
  os: few({ ...column('os'), label: osLabel } as DimensionSource),
  browser: few(column('browser')),
  referrer: few(column('referrer', 'referrer_host')),
  utm_source: few(column('utm_source')),
  utm_medium: few(column('utm_medium')),
  utm_campaign: few(column('utm_campaign')),
  utm_term: column('utm_term'),
  utm_content: few(column('utm_content')),
  source: few(column('source')),
  link: { ...column('link_id'), label: linkRowLabel } as DimensionSource,
  campaign: { ...column('campaign_id'), label: campaignLabel } as DimensionSource,
  rule: { ...column('rule_id'), emptyValue: 'default', label: ruleLabel } as DimensionSource,
  destination: column('destination'),
  tag: { kind: 'linkValues', linkValues: linkTags, fingerprint: linkTagsFingerprint },
};

/** A filter's values as stored: null is the empty value, and so is a dimension's emptyValue. */
export function storedValues(dimension: Dimension, values: Array<string | null>): string[] {
  const source = dimensionSources[dimension];
  const empty = source.kind === 'column' ? source.emptyValue : undefined;
  return values.map((v) => (v === null || v === empty ? '' : v));
}

export const hasDimensionFilters = (filters: DimensionFilters): boolean => Object.values(filters).some((v) => v !== undefined);
