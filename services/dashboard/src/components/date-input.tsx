import { useLayoutEffect, useRef } from 'preact/hooks';

/** The days the API's event store holds (README: from 1970-01-01 to 2299-12-31); a year outside is a half-typed one. */
const FIRST_YEAR = 1970;
const LAST_YEAR = 2299;

/** A day of the calendar, as YYYY-MM-DD: not 2026-02-30, 2026-10-32 or 2026-13-01 (Date would read some as another day, others as no date at all). */
export function isCalendarDate(value: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  const day = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(day.getTime()) && day.toISOString().startsWith(value);
}

/** A whole calendar day within the years the API takes (0002-11-29 is a year still being typed). */
export function isPlausibleDate(value: string): boolean {
  const year = Number(value.slice(0, 4));
  return isCalendarDate(value) && year >= FIRST_YEAR && year <= LAST_YEAR;
}

interface Props {
  id: string;
  name?: string;
  value: string;
  min?: string | undefined;
  max?: string | undefined;
  /** Whether the field may be emptied (a filter); else an empty field goes back to `value`. */
  clearable?: boolean;
  /** aria-invalid, and the ids of what describes the field (its message): as every field error is tied to its field. */
  invalid?: boolean;
  describedBy?: string | undefined;
  /** Told of a whole day not applied because it lies outside min/max, so the caller can say why: else the field only goes back. */
  refused?(day: string): void;
  /**
   * Applies a day ('' for an emptied field). `first` is true for the first change
   * since the field got focus: the caller pushes a history entry for it and
   * replaces that entry with the later ones, so one edit is one step of Back.
   */
  commit(value: string, first: boolean): void;
}

/**
 * A date field that applies only whole, plausible days. A date field changes on
 * every key typed into it (typing 10302026 passes 0002-10-30, 0020-…, 0202-…, and
 * whole days on the way when a day was there): a typed day applies on Enter or on
 * leaving the field, as a text filter does; a day picked from the calendar applies
 * at once. A day out of min/max, or half typed, never applies; leaving the field
 * puts the applied day back. No timer: a commit while keys are still coming would
 * set the field under the user's fingers.
 */
export function DateInput({ id, name, value, min, max, clearable = false, invalid = false, describedBy, refused, commit }: Props) {
  const typing = useRef(false);
  const committedInFocus = useRef(false);
  // Uncontrolled: a `value` prop would be put back into the field at every render of
  // the view (a list loading beside it) and wipe a day half typed. It is set when it changes.
  const field = useRef<HTMLInputElement>(null);
  useLayoutEffect(() => {
    if (field.current && field.current.value !== value) field.current.value = value;
  }, [value]);

  /** Applies what the field holds if it is a day to apply; whether it holds the applied day now. */
  const apply = (input: HTMLInputElement): boolean => {
    const next = input.value;
    if (next === value) return true;
    // badInput: some parts typed, others not (the value reads '' then too).
    const emptied = next === '' && !input.validity.badInput;
    if (emptied ? !clearable : !isPlausibleDate(next) || !input.validity.valid) {
      if (isPlausibleDate(next) && (input.validity.rangeUnderflow || input.validity.rangeOverflow)) refused?.(next);
      return false;
    }
    commit(next, !committedInFocus.current);
    committedInFocus.current = true;
    return true;
  };

  return (
    <input
      id={id}
      name={name}
      type="date"
      ref={field}
      min={min}
      max={max}
      aria-invalid={invalid ? 'true' : undefined}
      aria-describedby={describedBy}
      onFocus={() => (committedInFocus.current = false)}
      onKeyDown={(e) => {
        typing.current = e.key !== 'Enter' && e.key !== 'Tab';
        if (e.key === 'Enter') apply(e.currentTarget);
      }}
      // The calendar is opened with the pointer: what it picks is no typing.
      onPointerDown={() => (typing.current = false)}
      onChange={(e) => {
        if (!typing.current) apply(e.currentTarget);
      }}
      onBlur={(e) => {
        const input = e.currentTarget;
        if (!apply(input)) input.value = value;
      }}
    />
  );
}
