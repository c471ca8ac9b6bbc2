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
