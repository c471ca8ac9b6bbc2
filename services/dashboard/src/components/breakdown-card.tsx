import { useRef } from 'preact/hooks';
import { fmtInt } from '../format.ts';
import { filtersFrom } from '../filters.ts';
import { nowAt } from '../focus.ts';
import { useFocusAfterRemoval } from '../use-focus-after-removal.ts';

import type { ComponentChildren } from 'preact';

/**
 * Whether the analytics filters (a dimension or a campaign) are on: the URL holds every
 * one the card's rows are under. An empty card then says the filters match nothing,
 * not that the range has no clicks.
 */
function filtersOn(): boolean {
  const query = new URLSearchParams(location.search);
  return query.has('campaignId') || Object.keys(filtersFrom(query)).length > 0;
}

export interface BreakdownRow {
  value: string | null;
  label: string;
  count: number;
  /** Shown instead of the count (e.g. device shares, which the API gives as percentages). */
  display?: string;
  href?: string;
  /** More figures of the row: a tooltip on hover, and shown and read as the row's description when it has focus. */
  title?: string;
  /**
   * A chosen value the answer does not list, shown at 0 so it can be taken away where
   * listed (BreakdownTabs): no row of the API's. Tested by this flag, never by a count
   * of 0, which a row of the API's may have too (conversions of clicks before the range).
   */
  unmatched?: boolean;
  /** A chosen value from past the card's page, asked for by itself (BreakdownTabs): like an unmatched row, it goes once its filter is taken away. */
  pastPage?: boolean;
  /**
   * A state of the value said in words beside its label (a deleted link's "deleted"), and in
   * its filter button's name. With `href`, the marker is a link there (named `name`): the
   * value's own page, which no list leads to any more.
   */
  marker?: { text: string; href?: string | undefined; name: string };
}

/** A row's marker: its words, or a link to its page. */
function Marker({ marker }: { marker: NonNullable<BreakdownRow['marker']> }) {
  return marker.href ? (
    <a class="badge" href={marker.href} aria-label={marker.name}>
      {marker.text}
    </a>
  ) : (
    <span class="badge">{marker.text}</span>
  );
}

/**
 * A ranked list of one dimension. Each row is a button (or a link) that filters
 * by that value: keyboard and screen readers reach it like any control. The bars
 * are decoration; the numbers are text.
 *
 * Its rows take the room of a full page of them (`.breakdown-rows`, styles.css) whatever
 * they are (loading, none, a few), as Plausible's and Dub's cards do: a card that grew
 * when its rows landed moved everything below it under the reader.
 */
export function BreakdownCard(props: {
  title: string;
  rows: BreakdownRow[];
  countLabel: string;
  onSelect?: ((row: BreakdownRow) => void) | undefined;
  selectLabel?: string;
  /** Values chosen as filters: their rows are marked, and selecting one again takes it away. One the answer does not list may be an `unmatched` row at 0. */
  chosen?: ReadonlySet<string>;
  id: string;
  loading?: boolean;
  /** Under the title: e.g. tabs choosing the dimension. */
  header?: ComponentChildren;
  /** The first column's heading; default the title. */
  columnLabel?: string;
  footer?: ComponentChildren;
}) {
  const max = Math.max(1, ...props.rows.map((r) => r.count));
  // An unmatched (or past-page) row goes once its filter is taken away (when the figures under the
  // new filters have answered: `chosen` then changes), and its button, which had
  // focus, with it: focus goes to the row now in its place, else the card's heading
  // (WCAG 2.4.3), unless the user has put it elsewhere meanwhile.
  // Invariant: what expectLeaving was given names a connected button, waiting for the
  // chosen values it was clicked under to change, with focus on it or nowhere (a click
  // need not focus a button: Safari); any other state forgets it, so a button that stays
  // (its filter back, focus moved on) never takes focus when it goes later.
  const section = useRef<HTMLElement>(null);
  const chosenKey = [...(props.chosen ?? [])].join('\n');
  const expectLeaving = useFocusAfterRemoval<{ button: HTMLElement; index: number; chosenKey: string }>(
    (left) => {
      const focus = document.activeElement;
      const nowhere = focus === null || focus === document.body;
      if (left.button.isConnected) return left.chosenKey !== chosenKey || !(nowhere || focus === left.button) ? 'forget' : false;
      return nowhere || 'forget';
    },
    (left) => [nowAt(section.current?.querySelectorAll('button.bar-row') ?? [], left.index), section.current?.querySelector('h2')],
  );
  // Nothing the API gave (an API row at 0 clicks is one: it has conversions): the card says why it lists nothing, or only the chosen.
  const noneListed = !props.rows.some((r) => !r.unmatched);
  return (
    <section class="card breakdown" aria-labelledby={`${props.id}-title`} ref={section}>
      <h2 id={`${props.id}-title`}>{props.title}</h2>
      {props.header}
      {props.chosen && props.chosen.size > 0 && <p class="muted facet-note">Every value under the other filters; the chosen are marked.</p>}
      <div class="breakdown-rows">
        {props.loading && <p class="muted">Loading…</p>}
        {!props.loading && noneListed && (
          <p class="muted" data-empty>
            {filtersOn() ? 'No clicks match these filters. Remove one (the chips above) to see more.' : 'No clicks in this range.'}
          </p>
        )}
        {!props.loading && props.rows.length > 0 && (
          <table>
            <thead>
              <tr>
                <th scope="col">{props.columnLabel ?? props.title}</th>
                <th scope="col" class="num">
                  {props.countLabel}
                </th>
              </tr>
            </thead>
            <tbody>
              {props.rows.map((row, i) => {
                // Not in a title alone (WCAG 1.3.1, 2.1.1): keyboard and screen-reader users never get a tooltip.
                const figuresId = row.title ? `${props.id}-figures-${i}` : undefined;
                const isChosen = props.chosen?.has(row.value ?? '(none)') ?? false;
                const content = (
                  <>
                    <span class="bar" style={{ width: `${(row.count / max) * 100}%` }} aria-hidden="true" />
                    <span class="bar-label">{row.label}</span>
                  </>
                );
                const control = row.href ? (
                  <a class="bar-row" href={row.href} aria-describedby={figuresId}>
                    {content}
                  </a>
                ) : props.onSelect ? (
                  <button
                    type="button"
                    class="bar-row"
                    onClick={(event) => {
                      if (isChosen && (row.unmatched || row.pastPage)) expectLeaving({ button: event.currentTarget, index: i, chosenKey });
                      props.onSelect!(row);
                    }}
                    aria-pressed={props.chosen ? isChosen : undefined}
                    // One name whatever the state: aria-pressed says whether the filter is on (WCAG 4.1.2).
                    aria-label={`${props.selectLabel ?? 'Filter by'} ${row.label}${row.marker ? ` (${row.marker.text})` : ''}`}
                    aria-describedby={figuresId}
                  >
                    {content}
                  </button>
                ) : (
                  <span class="bar-row">{content}</span>
                );
                return (
                  <tr key={row.value ?? '(none)'} data-value={row.value ?? ''} title={row.title}>
                    <th scope="row">
                      {row.marker ? (
                        <div class="bar-marked">
                          {control}
                          <Marker marker={row.marker} />
                        </div>
                      ) : (
                        control
                      )}
                      {figuresId && (
                        <span id={figuresId} class="row-figures">
                          {row.title}
                        </span>
                      )}
                    </th>
                    <td class="num">{row.display ?? fmtInt(row.count)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        )}
      </div>
      {props.footer}
    </section>
  );
}
