import { setQuery } from '../router.ts';

export const presets = ['2d', '7d', '30d', '90d', 'custom'] as const;
export type Preset = (typeof presets)[number];
/**
 * The API reports whole local days (from/to are dates), so the shortest preset is
 * yesterday and today by the hour, up to 48 hours, and is named for what it is
 * rather than "24 h". `range=24h`, its old name, still opens it.
 */
const presetLabels: Record<Preset, { label: string; title?: string }> = {
  '2d': { label: 'Yesterday and today', title: 'Yesterday and today, by hour: reports cover whole days, so this is up to 48 hours' },
  '7d': { label: '7 d', title: 'The last 7 days, today included' },
  '30d': { label: '30 d', title: 'The last 30 days, today included' },
  '90d': { label: '90 d', title: 'The last 90 days, today included' },
  custom: { label: 'Custom' },
};
const presetAliases: Record<string, Preset> = { '24h': '2d' };
const granularities = ['hour', 'day', 'week', 'month'] as const;
type Granularity = (typeof granularities)[number];

export interface Range {
  preset: Preset;
  from: string;
  to: string;
  granularity: Granularity;
  timezone: string;
  /** The period of the same length just before, for comparisons. */
  previousFrom: string;
  previousTo: string;
}

const DAY = 86_400_000;
const addDays = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY).toISOString().slice(0, 10);
const todayIn = (timezone: string) => new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
const isDate = (s: string | null): s is string => !!s && /^\d{4}-\d{2}-\d{2}$/.test(s);

/** The zone's canonical IANA name, or null when Intl knows no such zone. */
function canonicalZone(zone: string): string | null {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch (err) {
    // An unknown zone (a hand-edited URL): RangeError.
    if (err instanceof RangeError) return null;
    throw err;
  }
}

/** Every IANA zone the browser knows, UTC first (Intl lists only geographic zones). */
let zoneList: string[] | undefined;
function allZones(): string[] {
  zoneList ??= ['UTC', ...Intl.supportedValuesOf('timeZone').filter((z) => z !== 'UTC')];
  return zoneList;
}

/** Listed names by their canonical form: ICU may call a zone by an older name than the list (Asia/Calcutta for Asia/Kolkata). */
let byCanonical: Map<string, string> | undefined;

/** A zone as the picker lists it, or null when Intl knows no such zone. */
function listedZone(zone: string): string | null {
  if (allZones().includes(zone)) return zone;
  const canonical = canonicalZone(zone);
  if (canonical === null) return null;
  byCanonical ??= new Map(allZones().map((z) => [canonicalZone(z) ?? z, z]));
  return byCanonical.get(canonical) ?? canonical;
}

/** The reader's own zone, as the browser knows it: the default of every report. */
export const browserZone = (): string => listedZone(Intl.DateTimeFormat().resolvedOptions().timeZone) ?? 'UTC';

/** The report range from the URL: the presets end today in the report's zone, which is the reader's unless `tz` names one. */
export function rangeFrom(query: URLSearchParams): Range {
  const tz = query.get('tz');
  const timezone = (tz && listedZone(tz)) || browserZone();
  const asked = query.get('range') ?? '';
  const preset = presetAliases[asked] ?? ((presets as readonly string[]).includes(asked) ? (asked as Preset) : '30d');
  const today = todayIn(timezone);
  let from: string;
  let to: string;
  if (preset === 'custom' && isDate(query.get('from')) && isDate(query.get('to'))) {
    from = query.get('from')!;
    to = query.get('to')!;
  } else {
    const days = preset === '2d' ? 2 : preset === '7d' ? 7 : preset === '90d' ? 90 : 30;
    to = today;
    from = addDays(today, -(days - 1));
  }
  const spanDays = Math.round((Date.parse(to) - Date.parse(from)) / DAY) + 1;
  const askedGranularity = query.get('granularity') as Granularity | null;
  const fallback: Granularity = preset === '2d' ? 'hour' : spanDays > 120 ? 'week' : 'day';
  // Hourly buckets are allowed up to 31 days by the API.
  const granularity = askedGranularity && granularities.includes(askedGranularity) && !(askedGranularity === 'hour' && spanDays > 31) ? askedGranularity : fallback;
  return { preset, from, to, granularity, timezone, previousTo: addDays(from, -1), previousFrom: addDays(from, -spanDays) };
}

export function RangeControls({ range }: { range: Range }) {
  const zones = allZones();
  const zoneOptions = zones.includes(range.timezone) ? zones : [range.timezone, ...zones];
  return (
    <form class="controls" aria-label="Report range" onSubmit={(e) => e.preventDefault()}>
      <fieldset class="segmented">
        <legend class="visually-hidden">Range</legend>
        {presets.map((p) => (
          <label key={p} class={range.preset === p ? 'active' : ''} title={presetLabels[p].title}>
            <input
              type="radio"
              name="range"
              value={p}
              checked={range.preset === p}
              onChange={() => setQuery(p === 'custom' ? { range: p, from: range.from, to: range.to } : { range: p, from: undefined, to: undefined, granularity: undefined })}
            />
            {presetLabels[p].label}
          </label>
        ))}
      </fieldset>
      {range.preset === 'custom' && (
        <>
          <span class="inline-field">
            <label for="range-from">From</label>
            <input id="range-from" type="date" value={range.from} max={range.to} onChange={(e) => setQuery({ from: e.currentTarget.value })} />
          </span>
          <span class="inline-field">
            <label for="range-to">To</label>
            <input id="range-to" type="date" value={range.to} min={range.from} onChange={(e) => setQuery({ to: e.currentTarget.value })} />
          </span>
        </>
      )}
      <span class="inline-field">
        <label for="range-granularity">Granularity</label>
        <select id="range-granularity" value={range.granularity} onChange={(e) => setQuery({ granularity: e.currentTarget.value })}>
          {granularities.map((g) => (
            <option key={g} value={g}>
              {g}
            </option>
          ))}
        </select>
      </span>
      <span class="inline-field">
        <label for="range-tz">Time zone</label>
        {/* The URL names the zone once one is picked, so a shared view shows the same days to everyone. */}
        <select id="range-tz" value={range.timezone} onChange={(e) => setQuery({ tz: e.currentTarget.value })}>
          {zoneOptions.map((z) => (
            <option key={z} value={z}>
              {z}
            </option>
          ))}
        </select>
      </span>
    </form>
  );
}
