import { useRef } from 'preact/hooks';
import { dimensions, dimensionLabels, filterValues, removeFilter, seenLabels, useSeenLabels, valueLabel } from '../filters.ts';
import { nowAt, viewHeading } from '../focus.ts';
import { useFocusAfterRemoval } from '../use-focus-after-removal.ts';
import { setQuery, type Location } from '../router.ts';

const chipKey = (chip: { name: string; value: string | null }) => `${chip.name}=${chip.value}`;

/**
 * Every active filter as a removable chip; "Clear all" drops them together. A view that
 * applies no dimension filter (the conversions) shows its own chips only (`withDimensions`
 * false): a chip says what the view applies.
 */
export function FilterChips({ loc, extra = [], withDimensions = true }: { loc: Location; extra?: Array<{ name: string; label: string }>; withDimensions?: boolean }) {
  useSeenLabels();
  // An extra chip (a filter of the view's own, not a dimension) goes whole; a dimension's
  // chip takes its value alone, an empty one too (`?tag=sale,%20`).
  const chips: Array<{ name: string; value: string | null; label: string }> = extra.map((e) => ({ name: e.name, value: null, label: e.label }));
  for (const d of withDimensions ? dimensions : []) {
    for (const value of filterValues(d, loc.query.get(d))) chips.push({ name: d, value, label: `${dimensionLabels[d]}: ${valueLabel(d, value, seenLabels)}` });
  }
  // A removed chip takes its button, which had focus, with it (WCAG 2.4.3): focus goes
  // to the chip now in its place, else the one before, else the heading of what the
  // filters apply to (the section's, or the view's). Only once the removed chips are
  // gone: an effect of a render from before the removal (Preact runs a component's
  // pending effects before rendering it again) would otherwise focus the very button
  // about to go, and focus would fall to the page with it.
  const list = useRef<HTMLUListElement>(null);
  const expectRemoval = useFocusAfterRemoval<{ index: number; fallback: Element | null; gone: ReadonlySet<string> }>(
    (removal) => !chips.some((chip) => removal.gone.has(chipKey(chip))),
    (removal) => [nowAt(list.current?.querySelectorAll('button[data-remove]') ?? [], removal.index), removal.fallback],
  );
  const removing = (index: number, gone: ReadonlyArray<(typeof chips)[number]>) => {
    const section = list.current?.closest('section');
    expectRemoval({ index, fallback: section?.querySelector('h2') ?? viewHeading(), gone: new Set(gone.map(chipKey)) });
  };

  if (chips.length === 0) return null;
  return (
    <ul class="chips" aria-label="Active filters" ref={list}>
      {chips.map((chip, i) => (
        <li key={chipKey(chip)} data-filter={chip.name}>
          <span>{chip.label}</span>
          <button
            type="button"
            data-remove
            aria-label={`Remove filter ${chip.label}`}
            onClick={() => {
              removing(i, [chip]);
              if (chip.value !== null) removeFilter(chip.name, chip.value);
              else setQuery({ [chip.name]: undefined });
            }}
          >
            ×
          </button>
        </li>
      ))}
      {chips.length > 1 && (
        <li>
          <button
            type="button"
            class="linkish"
            onClick={() => {
              removing(0, chips);
              setQuery(Object.fromEntries(chips.map((c) => [c.name, undefined])));
            }}
          >
            Clear all
          </button>
        </li>
      )}
    </ul>
  );
}
