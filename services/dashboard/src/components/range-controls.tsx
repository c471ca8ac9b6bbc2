import { setQuery } from '../router.ts';

export const presets = ['24h', '7d', '30d', '90d', 'custom'] as const;
export type Preset = (typeof presets)[number];
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

function validZone(zone: string | null): string {
  if (!zone) return 'UTC';
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch (err) {
    // An unknown zone (a hand-edited URL): RangeError.
    if (err instanceof RangeError) return 'UTC';
    throw err;
  }
}

/**
 * The report range from the URL. The API takes whole local days, so "24 h" is
 * yesterday and today by the hour; the others end today.
 */
export function rangeFrom(query: URLSearchParams): Range {
  const timezone = validZone(query.get('tz'));
  const preset = (presets as readonly string[]).includes(query.get('range') ?? '') ? (query.get('range') as Preset) : '30d';
  const today = todayIn(timezone);
  let from: string;
  let to: string;
  if (preset === 'custom' && isDate(query.get('from')) && isDate(query.get('to'))) {
    from = query.get('from')!;
    to = query.get('to')!;
  } else {
    const days = preset === '24h' ? 2 : preset === '7d' ? 7 : preset === '90d' ? 90 : 30;
    to = today;
    from = addDays(today, -(days - 1));
  }
  const spanDays = Math.round((Date.parse(to) - Date.parse(from)) / DAY) + 1;
  const asked = query.get('granularity') as Granularity | null;
  const fallback: Granularity = preset === '24h' ? 'hour' : spanDays > 120 ? 'week' : 'day';
  // Hourly buckets are allowed up to 31 days by the API.
  const granularity = asked && granularities.includes(asked) && !(asked === 'hour' && spanDays > 31) ? asked : fallback;
  return { preset, from, to, granularity, timezone, previousTo: addDays(from, -1), previousFrom: addDays(from, -spanDays) };
}

const zones = ['UTC', 'Europe/London', 'Europe/Berlin', 'America/New_York', 'America/Chicago', 'America/Los_Angeles', 'Asia/Tokyo', 'Asia/Kolkata', 'Australia/Sydney'];

export function RangeControls({ range }: { range: Range }) {
  const zoneOptions = zones.includes(range.timezone) ? zones : [range.timezone, ...zones];
  return (
    <form class="controls" aria-label="Report range" onSubmit={(e) => e.preventDefault()}>
      <fieldset class="segmented">
        <legend class="visually-hidden">Range</legend>
        {presets.map((p) => (
          <label key={p} class={range.preset === p ? 'active' : ''}>
            <input
              type="radio"
              name="range"
              value={p}
              checked={range.preset === p}
              onChange={() => setQuery(p === 'custom' ? { range: p, from: range.from, to: range.to } : { range: p, from: undefined, to: undefined, granularity: undefined })}
            />
            {p === 'custom' ? 'Custom' : p.replace('h', ' h').replace('d', ' d')}
          </label>
        ))}
      </fieldset>
      {range.preset === 'custom' && (
        <>
          <label>
            From <input type="date" value={range.from} max={range.to} onChange={(e) => setQuery({ from: e.currentTarget.value })} />
          </label>
          <label>
            To <input type="date" value={range.to} min={range.from} onChange={(e) => setQuery({ to: e.currentTarget.value })} />
          </label>
        </>
      )}
      <label>
        Granularity{' '}
        <select value={range.granularity} onChange={(e) => setQuery({ granularity: e.currentTarget.value })}>
          {granularities.map((g) => (
            <option key={g} value={g}>
              {g}
            </option>
          ))}
        </select>
      </label>
      <label>
        Time zone{' '}
        <select value={range.timezone} onChange={(e) => setQuery({ tz: e.currentTarget.value === 'UTC' ? undefined : e.currentTarget.value })}>
          {zoneOptions.map((z) => (
            <option key={z} value={z}>
              {z}
            </option>
          ))}
        </select>
      </label>
    </form>
  );
}
