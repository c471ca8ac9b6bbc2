/**
 * Where focus goes after an action removes or replaces the control that had it
 * (WCAG 2.4.3): without a move it falls to <body> and a keyboard or screen-reader
 * user starts again from the top of the page.
 */

/** Focuses `el`; a heading or region gets tabindex=-1 first, so a script may focus it while Tab still skips it. */
export function focusElement(el: Element | null | undefined): boolean {
  if (!(el instanceof HTMLElement) || !el.isConnected) return false;
  if (el.tabIndex < 0 && !el.hasAttribute('tabindex')) el.setAttribute('tabindex', '-1');
  // Blurred first: focus() on the element that has it fires nothing, and a screen reader then reads none of its new state (aria-invalid, a new message).
  if (document.activeElement === el) el.blur();
  el.focus();
  return document.activeElement === el;
}

/** Focuses the first candidate still in the page; false when none could take it. */
export function focusFirst(...candidates: Array<Element | null | undefined>): boolean {
  return candidates.some((el) => focusElement(el));
}

/** The view's main heading: where focus goes when nothing closer is left. */
export const viewHeading = (): Element | null => document.querySelector('main h1');

/** The item that takes `id`'s place in `list` once it goes (the next, else the one before), for focus to move to. */
export function inItsPlace<T extends { id: string }>(list: readonly T[], id: string): T | undefined {
  const at = list.findIndex((item) => item.id === id);
  return at < 0 ? undefined : (list[at + 1] ?? list[at - 1]);
}

/** What now stands at `index`, where a removed item stood (the next, moved up), else the last (the one before it). */
export const nowAt = <T>(items: ArrayLike<T>, index: number): T | undefined => items[Math.min(index, items.length - 1)];
