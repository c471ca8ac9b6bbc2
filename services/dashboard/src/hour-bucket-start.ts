/**
 * Where an hour bucket really starts on the report's clock. The API buckets whole
 * UTC hours (its rollups are per UTC hour) and labels each by the local hour its
 * start falls in, always `HH:00` (README "Ranges and zones"). In a zone whose
 * offset is not whole hours (Asia/Kolkata +05:30, Asia/Kathmandu +05:45,
 * America/St_Johns -03:30) that hour starts at :30 or :45 local: the bucket labelled
 * `05:00` in Kolkata holds 05:30 to 06:30, where a click at 06:11 belongs. The
 * dashboard shows that start, so no click seems to fall an hour off.
 */
import { utcOffsetMs, zoneClock } from '../../../shared/routing/zone-clock.ts';

/** The zone's UTC offset at instant `ms`, in minutes (east positive); 0 for a zone this browser does not know. */
function offsetMinutes(timeZone: string, ms: number): number {
  const clock = zoneClock(timeZone);
  return clock === null ? 0 : utcOffsetMs(clock, ms) / 60_000;
}

/** The instant a local time (`2026-11-30T05:30`, or a day `2026-11-30`: its midnight) of `timeZone` is. */
export function localToInstant(local: string, timeZone: string): number {
  const written = Date.parse(local.length === 10 ? `${local}T00:00:00Z` : `${local}:00Z`);
  return written - offsetMinutes(timeZone, written - offsetMinutes(timeZone, written) * 60_000) * 60_000;
}

/** `2026-11-30T05:00` (an hour bucket's label) as its local start, `2026-11-30T05:30`; other labels as they are. */
export function hourBucketStart(label: string, timeZone: string): string {
  if (label.length !== 16 || label[10] !== 'T') return label;
  const written = Date.parse(`${label}:00Z`);
  if (Number.isNaN(written)) return label;
  // The offset in force in that local hour: asked once at a guess of the instant, then at the instant it gives.
  const offset = offsetMinutes(timeZone, written - offsetMinutes(timeZone, written) * 60_000);
  const minute = ((offset % 60) + 60) % 60;
  return minute === 0 ? label : `${label.slice(0, 14)}${String(minute).padStart(2, '0')}`;
}
