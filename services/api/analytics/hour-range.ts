import { addDays, dateToMs, isInstant, localDateAt, msToDate } from '../../../shared/schemas/analytics.ts';

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/**
 * The UTC hours an overview counts: those whose start falls on a local day from
 * `from` to `to` in `timezone`, always one unbroken run; for a range of instants,
 * the hours from `from` up to `to`. Rollups are per UTC hour,
 * so in 30/45-minute zones an hour straddling local midnight belongs wholly to the
 * day its start falls in. `whole` is the run of whole UTC days inside it, which
 * daily rollups can answer; the hours outside it are the edges.
 */
export interface HourRange {
  /** First hour counted, epoch ms. */
  startMs: number;
  /** End of the last hour counted (exclusive), epoch ms. */
  endMs: number;
  whole: { first: string; last: string } | null;
}

/** First whole UTC hour at or after `fromMs` whose start is on local day `date` or later. */
function firstHourOnOrAfter(date: string, fromMs: number, timeZone: string): number {
  // Local midnight is within a day and a half of UTC midnight in every zone.
  let ms = fromMs;
  while (localDateAt(ms, timeZone) < date) ms += HOUR_MS;
  return ms;
}

const QUARTER_HOUR_MS = 900_000;

/**
 * The first instant of local day `date` in `timeZone`: its local midnight, or where the
 * day begins when a clock change skips midnight. Offsets and their changes fall on
 * whole UTC quarter hours in every zone since the 1970s, so a day begins on one: the
 * first hour on the day, then the quarter hours before it.
 */
export function localDayStartMs(date: string, timeZone: string): number {
  let ms = firstHourOnOrAfter(date, dateToMs(date) - DAY_MS, timeZone);
  while (localDateAt(ms - QUARTER_HOUR_MS, timeZone) >= date) ms -= QUARTER_HOUR_MS;
  return ms;
}

export function hourRange(from: string, to: string, timeZone: string): HourRange {
  // Instants are whole UTC hours already (the query schema rounds them): the range is theirs.
  const startMs = isInstant(from) ? Date.parse(from) : firstHourOnOrAfter(from, dateToMs(from) - DAY_MS, timeZone);
  const endMs = isInstant(to) ? Date.parse(to) : firstHourOnOrAfter(addDays(to, 1), Math.max(startMs, dateToMs(to) - DAY_MS), timeZone);
  const firstWhole = Math.ceil(startMs / DAY_MS) * DAY_MS;
  const lastWholeEnd = Math.floor(endMs / DAY_MS) * DAY_MS;
  const whole = firstWhole < lastWholeEnd ? { first: msToDate(firstWhole), last: msToDate(lastWholeEnd - DAY_MS) } : null;
  return { startMs, endMs, whole };
}

/** `YYYY-MM-DD HH:MM:SS` in UTC, as ClickHouse parses a DateTime parameter. */
export const sqlDateTime = (ms: number): string => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
