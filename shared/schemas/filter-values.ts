import { tagNormalForm } from './tag-normal-form.ts';

/** The value that stands for the empty one (no referrer, no UTM field): the row a breakdown labels "(none)". */
export const NONE = '(none)';

/**
 * How a filter names a value that is literally the text `(none)` (a GA-style
 * `utm_medium=(none)` a visitor's link carried), as NONE names the empty value: `\(none)`.
 * The dashboard's addresses escape its backslash (`\\(none)`, joinFilterValues); both read alike.
 */
export const LITERAL_NONE = '\\(none)';

/** A breakdown row's value as a filter names it: NONE for the empty value, LITERAL_NONE for the text `(none)`, else itself. */
export function filterValueOf(value: string | null): string {
  if (value === null) return NONE;
  return value === NONE ? LITERAL_NONE : value;
}

/**
 * The values of an analytics filter parameter: comma-separated (any of them matches),
 * a backslash escaping a comma or a backslash (`a\,b` is the one value `a,b`), so every
 * value a breakdown shows, commas included, can be a filter. Any other backslash is
 * itself. No zod here: the dashboard's bundle takes this file too.
 */
export function splitFilterValues(raw: string): string[] {
  if (!raw.includes('\\')) return raw.split(',');
  const values: string[] = [];
  let value = '';
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '\\' && (raw[i + 1] === ',' || raw[i + 1] === '\\')) value += raw[++i];
    else if (c === ',') {
      values.push(value);
      value = '';
    } else value += c;
  }
  values.push(value);
  return values;
}

/** The parameter for `values`: splitFilterValues(joinFilterValues(v)) is v. */
export function joinFilterValues(values: Iterable<string>): string {
  return [...values].map((v) => v.replace(/[\\,]/g, '\\$&')).join(',');
}

// ASCII only: these values are ASCII, and full case mapping would let text through that
// only looks like one (`ß` upper-cased is `SS`, the Kelvin sign lower-cased is `k`).
const lowercase = (value: string) => value.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
const uppercase = (value: string) => value.replace(/[a-z]+/g, (letters) => letters.toUpperCase());

/**
 * How the API spells a filter value, as its breakdown rows carry it: `de` filters the row
 * `DE`, `iOS` the row `ios`, `Summer Sale` the tag `summer sale`. A dimension not named
 * here is matched as written. The analytics schemas spell a value before checking it
 * (analytics-dimensions.ts), and the dashboard spells the values in its address the same
 * way, so a chosen value typed in another case is still the row it names.
 */
const spellings: Readonly<Partial<Record<string, (value: string) => string>>> = {
  country: uppercase,
  device: lowercase,
  os: lowercase,
  source: lowercase,
  referrer: lowercase,
  tag: tagNormalForm,
};

/**
 * One value of a `dimension` filter, spelled as the API spells it. `(none)` is the empty
 * value only as written: nothing else spells to it (`(NONE)` stays a value of its own,
 * which the format of most dimensions refuses, and `(None)` a tag of that name), so the
 * API and the dashboard read an address alike.
 */
export function spellFilterValue(dimension: string, value: string): string {
  if (value === NONE || value === LITERAL_NONE) return value;
  const spelled = spellings[dimension]?.(value) ?? value;
  return spelled === NONE ? value : spelled;
}
