import { useEffect, useRef, useState } from 'preact/hooks';
import { setQuery } from './router.ts';

/** Keys that move through a closed select's options, each firing change (Chrome and Firefox off macOS). */
const browsingKeys = new Set(['ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'Home', 'End', 'PageUp', 'PageDown']);
const SETTLE_MS = 400;

/** A key that moves a closed select to another option: an arrow key and the like, or type-ahead; unmodified (Alt+ArrowDown opens the list). */
const browses = (event: KeyboardEvent) =>
  !event.altKey && !event.ctrlKey && !event.metaKey && (browsingKeys.has(event.key) || (event.key.length === 1 && event.key !== ' '));

/**
 * A key that opens a closed select's list: Alt+ArrowDown or Alt+ArrowUp, F4, Space,
 * and Enter in Chrome on Linux. Chromium (headless too) then sends the keys to the
 * list, not the select: the select hears nothing more until the list closes, and then
 * a change (when another option is picked), a click (the pick accepted, by Enter or
 * the pointer) and the keyup of the key that closed it. Escape closing the list keeps
 * the option moved to, with a change, but no click.
 */
const opensList = (event: KeyboardEvent) =>
  event.key === ' ' || event.key === 'Enter' || event.key === 'F4' || (event.altKey && (event.key === 'ArrowDown' || event.key === 'ArrowUp'));

/**
 * Props for a <select>, given its committed value and what committing does. A
 * closed select changes on every arrow key (and on type-ahead): committing each
 * would act on every option passed. So a choice made by browsing with keys is
 * pending until the user settles on it (Enter, leaving the field, or, with
 * `settleMs`, that long without a key; Escape drops it). A pick in the open list
 * commits as the list closes with it: at once when the list was opened with the
 * pointer; with the keyboard, once its Enter (or Chromium's click) says the pick was
 * accepted, not escaped. `commit` is told whether the choice was browsed to with keys.
 */
export function useDeliberateSelect(current: string, commit: (value: string, browsed: boolean) => void, settleMs: number | null) {
  const [pending, setPending] = useState<string | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const pendingRef = useRef<{ value: string; browsed: boolean } | null>(null);
  /**
   * Where the next change comes from, as the last gesture on the field says: keys
   * browsing the closed field, or its list opened with keys (both pending); null for
   * the pointer or anything else (committed at once).
   */
  const source = useRef<'browse' | 'list' | null>(null);
  useEffect(() => () => clearTimeout(timer.current), []);

  const settle = (value: string | null, browsed: boolean) => {
    clearTimeout(timer.current);
    timer.current = undefined;
    pendingRef.current = null;
    setPending(null);
    if (value !== null && value !== current) commit(value, browsed);
  };
  const flush = () => {
    if (pendingRef.current !== null) settle(pendingRef.current.value, pendingRef.current.browsed);
  };
  const goBack = (select: HTMLSelectElement) => {
    if (pendingRef.current === null) return;
    // The field goes back to what is committed (Preact sets only what changed).
    select.value = current;
    settle(null, true);
  };

  return {
    value: pending ?? current,
    onKeyDown(event: KeyboardEvent) {
      if (event.key === 'Enter') flush();
      if (event.key === 'Escape') goBack(event.currentTarget as HTMLSelectElement);
      source.current = opensList(event) ? 'list' : browses(event) ? 'browse' : null;
    },
    onKeyUp(event: KeyboardEvent) {
      // The key that closed a list opened with keys (its keydown went to the list):
      // Enter accepts what is pending (also an option browsed to before the list
      // opened, picked as it stands: no change then), Escape goes back.
      if (event.key === 'Enter') flush();
      else if (event.key === 'Escape') goBack(event.currentTarget as HTMLSelectElement);
      else return;
      source.current = null;
    },
    onClick() {
      // Chromium's click after a pick accepted in the list: a pick with the pointer in a list opened with keys has no keyup.
      if (source.current !== 'list') return;
      source.current = null;
      flush();
    },
    onPointerDown() {
      source.current = null;
    },
    onChange(event: Event) {
      const value = (event.currentTarget as HTMLSelectElement).value;
      if (source.current === null) return settle(value, false);
      const browsed = source.current === 'browse';
      // A browsing key changes the field once; the list's change is followed by how it closed.
      if (browsed) source.current = null;
      pendingRef.current = { value, browsed };
      setPending(value);
      clearTimeout(timer.current);
      if (settleMs !== null) timer.current = setTimeout(flush, settleMs);
    },
    onBlur() {
      source.current = null;
      flush();
    },
  };
}

/**
 * Props for a <select> that sets one query parameter (WCAG 3.2.2): applying each
 * keyboard step would reload the view and push a history entry per option passed.
 * A choice browsed to with keys applies once the user settles on it (400 ms,
 * Enter, or leaving the field) and replaces the entry; a pointer choice, or one
 * committed with Enter, applies at once and is an entry Back undoes.
 */
export function useQuerySelect(name: string, current: string) {
  return useDeliberateSelect(current, (value, browsed) => setQuery({ [name]: value || undefined }, { replace: browsed }), SETTLE_MS);
}
