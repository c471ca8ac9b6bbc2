import { dimensions, dimensionLabels, removeFilter, seenLabels, valueLabel } from '../filters.ts';
import { setQuery, type Location } from '../router.ts';
import { splitFilterValues } from '../../../../shared/schemas/filter-values.ts';

/** Every active filter as a removable chip; "Clear all" drops them together. */
export function FilterChips({ loc, extra = [] }: { loc: Location; extra?: Array<{ name: string; label: string }> }) {
  const chips = [...extra.map((e) => ({ name: e.name, value: '', label: e.label }))];
  for (const d of dimensions) {
    const raw = loc.query.get(d);
    if (!raw) continue;
    for (const value of splitFilterValues(raw)) chips.push({ name: d, value, label: `${dimensionLabels[d]}: ${valueLabel(d, value, seenLabels)}` });
  }
  if (chips.length === 0) return null;
  return (
    <ul class="chips" aria-label="Active filters">
      {chips.map((chip) => (
        <li key={`${chip.name}=${chip.value}`} data-filter={chip.name}>
          <span>{chip.label}</span>
          <button type="button" aria-label={`Remove filter ${chip.label}`} onClick={() => (chip.value ? removeFilter(chip.name, chip.value) : setQuery({ [chip.name]: undefined }))}>
            ×
          </button>
        </li>
      ))}
      {chips.length > 1 && (
        <li>
          <button type="button" class="linkish" onClick={() => setQuery(Object.fromEntries(chips.map((c) => [c.name, undefined])))}>
            Clear all
          </button>
        </li>
      )}
    </ul>
  );
}
