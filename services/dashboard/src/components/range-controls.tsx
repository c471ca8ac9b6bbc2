import { useEffect, useState } from 'preact/hooks';
import { setQuery } from '../router.ts';
import { useQuerySelect } from '../query-select.ts';
import { DateInput, isCalendarDate } from './date-input.tsx';
import { errorIdOf } from './field-errors.tsx';
import { currentZoneName } from '../time-zone-names.ts';

export const presets = ['24h', '7d', '30d', '90d', 'custom'] as const;
export type Preset = (typeof presets)[number];
const presetLabels: Record<Preset, { label: string; title?: string }> = {
  '24h': { label: '24 h', title: 'The last 24 hours, by hour, the current hour included' },
  '7d': { label: '7 d', title: 'The last 7 days, today included' },
  '30d': { label: '30 d', title: 'The last 30 days, today included' },
  '90d': { label: '90 d', title: 'The last 90 days, today included' },
  custom: { label: 'Custom' },
};
/** `range=2d` (yesterday and today, the shortest preset while reports took whole days only) opens the last 24 hours. */
const presetAliases: Record<string, Preset> = { '2d': '24h' };
const granularities = ['hour', 'day', 'week', 'month'] as const;
type Granularity = (typeof granularities)[number];

export interface Range {
  preset: Preset;
  /** Dates (whole days in `timezone`), or for `24h` instants on whole UTC hours (`to` exclusive): as the API takes them. */
  from: string;
  to: string;
  granularity: Granularity;
  timezone: string;
  /** The From the address asked when it lay more than MAX_RANGE_DAYS before To: `from` is then the earliest day the API reads. */
  cutFrom?: string;
}

/**
 * The longest range of days the reports read (the API's maxRangeDays, by day, week or
 * month; hours fall back to days past 31). The click log has no such limit (it pages):
 * its own fields are not these.
 */
export const MAX_RANGE_DAYS = 366;

const DAY = 86_400_000;
const HOUR = 3_600_000;
/** The instant a whole UTC hour starts, as the API echoes it. */
const hourInstant = (ms: number) => `${new Date(ms).toISOString().slice(0, 13)}:00:00Z`;
const addDays = (date: string, days: number) => new Date(Date.parse(`${date}T00:00:00Z`) + days * DAY).toISOString().slice(0, 10);
/** The day an instant (by default now) falls on in the zone. */
const dayIn = (timezone: string, at: number = Date.now()) => new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);
/** A day of the calendar: an address may hold 2026-10-32 or a month 13, which is read as no day at all (as a day of another shape is). */
const isDate = (s: string | null): s is string => !!s && isCalendarDate(s);

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

/** Every IANA zone the browser knows, by its current name, UTC first (Intl lists only geographic zones, some by retired names). */
let zoneList: string[] | undefined;
function allZones(): string[] {
  zoneList ??= ['UTC', ...Intl.supportedValuesOf('timeZone').filter((z) => z !== 'UTC').map(currentZoneName).sort()];
  return zoneList;
}

/** Listed names by their canonical form: ICU may call a zone by another name than the list (Asia/Calcutta, Asia/Kolkata). */
let byCanonical: Map<string, string> | undefined;

/** A zone as the picker lists it (its current name, whichever name was asked), or null when Intl knows no such zone. */
function listedZone(zone: string): string | null {
  if (allZones().includes(zone)) return zone;
  const canonical = canonicalZone(zone);
  if (canonical === null) return null;
  byCanonical ??= new Map(allZones().map((z) => [canonicalZone(z) ?? z, z]));
  return byCanonical.get(canonical) ?? currentZoneName(canonical);
}

/** The reader's own zone, as the browser knows it: the default of every report. */
export const browserZone = (): string => listedZone(Intl.DateTimeFormat().resolvedOptions().timeZone) ?? 'UTC';

/** The zone of every report's days: the reader's, unless the URL's `tz` names one. */
export function reportZone(query: URLSearchParams): string {
  const tz = query.get('tz');
  return (tz && listedZone(tz)) || browserZone();
}

/** The report range from the URL: the presets end today in the report's zone. */
export function rangeFrom(query: URLSearchParams): Range {
  const timezone = reportZone(query);
  const asked = query.get('range') ?? '';
  const preset = presetAliases[asked] ?? ((presets as readonly string[]).includes(asked) ? (asked as Preset) : '30d');
  const today = dayIn(timezone);
  let from: string;
  let to: string;
  if (preset === '24h') {
    // The 24 UTC hours up to the end of the current one, so the series ends with the clicks of this hour.
    // Computed once per render from the clock: it moves on with the hour, never within one.
    const end = Math.ceil((Date.now() + 1) / HOUR) * HOUR;
    const askedGranularity = query.get('granularity') as Granularity | null;
    const granularity = askedGranularity && granularities.includes(askedGranularity) ? askedGranularity : 'hour';
    return { preset, from: hourInstant(end - DAY), to: hourInstant(end), granularity, timezone };
  }
  if (preset === 'custom' && isDate(query.get('from')) && isDate(query.get('to'))) {
    from = query.get('from')!;
    to = query.get('to')!;
  } else {
    const days = preset === '7d' ? 7 : preset === '90d' ? 90 : 30;
    to = today;
    from = addDays(today, -(days - 1));
  }
  // A longer range comes from a hand-edited address or from days picked in the click log
  // (which has no limit): the API would refuse it, so the report ends on To and starts as
  // early as the API reads, and the controls say so.
  let cutFrom: string | undefined;
  if (from < addDays(to, -(MAX_RANGE_DAYS - 1))) {
    cutFrom = from;
    from = addDays(to, -(MAX_RANGE_DAYS - 1));
  }
  const spanDays = Math.round((Date.parse(to) - Date.parse(from)) / DAY) + 1;
  const askedGranularity = query.get('granularity') as Granularity | null;
  const fallback: Granularity = spanDays > 120 ? 'week' : 'day';
  // Hourly buckets are allowed up to 31 days by the API.
  const granularity = askedGranularity && granularities.includes(askedGranularity) && !(askedGranularity === 'hour' && spanDays > 31) ? askedGranularity : fallback;
  return { preset, from, to, granularity, timezone, ...(cutFrom ? { cutFrom } : {}) };
}

/** The days of a range: its own, or for 24 h the days its hours fall on (a custom range starts from them; the click log reads them). */
export function rangeDays(range: Range): { from: string; to: string } {
  if (isDate(range.from) && isDate(range.to)) return { from: range.from, to: range.to };
  return { from: dayIn(range.timezone, Date.parse(range.from)), to: dayIn(range.timezone, Date.parse(range.to) - 1) };
}

/** The range in words, for titles: the last 24 hours, or its first and last day. */
export const rangeWords = (range: Range): string => (range.preset === '24h' ? 'the last 24 hours' : `${range.from} to ${range.to}`);

/** The custom range's date fields, by id. */
type DateField = 'range-from' | 'range-to';

export function RangeControls({ range }: { range: Range }) {
  const zones = allZones();
  const zoneOptions = zones.includes(range.timezone) ? zones : [range.timezone, ...zones];
  const granularitySelect = useQuerySelect('granularity', range.granularity);
  const zoneSelect = useQuerySelect('tz', range.timezone);
  // The days each field may take: From not after To, and at most MAX_RANGE_DAYS in all (the
  // calendar offers no other; a typed one is refused, and `refusal` says why at its field).
  // Custom ranges only: their bounds are days (24 h's are instants).
  const bounds = (field: DateField) =>
    field === 'range-from'
      ? { label: 'From', min: addDays(range.to, -(MAX_RANGE_DAYS - 1)), max: range.to }
      : { label: 'To', min: range.from, max: addDays(range.from, MAX_RANGE_DAYS - 1) };
  const [refusal, setRefusal] = useState<{ field: DateField; message: string } | null>(null);
  // Any range applied (a day, a preset, Back) answers the refused day: its message goes.
  useEffect(() => setRefusal(null), [range.preset, range.from, range.to]);
  const refuse = (field: DateField) => (day: string) => {
    const { label, min, max } = bounds(field);
    setRefusal({ field, message: `${label} ${day} is not applied: pick a day from ${min} to ${max} (From is not after To, and a report spans at most ${MAX_RANGE_DAYS} days).` });
  };
  const described = (field: DateField) => [refusal?.field === field ? errorIdOf(field) : undefined, field === 'range-from' && range.cutFrom ? 'range-cut' : undefined].filter(Boolean).join(' ') || undefined;
  const dateField = (field: DateField, name: 'from' | 'to') => (
    <span class="inline-field">
      <label for={field}>{bounds(field).label}</label>
      <DateInput
        id={field}
        value={range[name]}
        min={bounds(field).min}
        max={bounds(field).max}
        invalid={refusal?.field === field}
        describedBy={described(field)}
        refused={refuse(field)}
        commit={(day, first) => setQuery({ [name]: day }, { replace: !first })}
      />
    </span>
  );
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
              onChange={() => setQuery(p === 'custom' ? { range: p, ...rangeDays(range) } : { range: p, from: undefined, to: undefined, granularity: undefined })}
            />
            {presetLabels[p].label}
          </label>
        ))}
      </fieldset>
      {range.preset === 'custom' && (
        <>
          {dateField('range-from', 'from')}
          {dateField('range-to', 'to')}
        </>
      )}
      <span class="inline-field">
        <label for="range-granularity">Granularity</label>
        <select id="range-granularity" {...granularitySelect}>
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
        <select id="range-tz" {...zoneSelect}>
          {zoneOptions.map((z) => (
            <option key={z} value={z}>
              {z}
            </option>
          ))}
        </select>
      </span>
      {/* Last, on a line of their own (under the fields, not between them). An alert: a day is refused on Enter or on leaving its field, where nothing else would read the reason out. */}
      {refusal && (
        <p id={errorIdOf(refusal.field)} class="field-error range-note" role="alert">
          {refusal.message}
        </p>
      )}
      {range.cutFrom && (
        <p id="range-cut" class="muted range-note">
          From {range.cutFrom} is more than {MAX_RANGE_DAYS} days before To: the report starts on {range.from}, as it spans at most {MAX_RANGE_DAYS} days.
        </p>
      )}
    </form>
  );
}
