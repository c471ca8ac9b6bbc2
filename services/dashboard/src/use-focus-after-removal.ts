import { useEffect, useRef } from 'preact/hooks';
import { focusFirst } from './focus.ts';

/**
 * What `gone` says of a removal under way: false while the control that had focus is
 * still in the page (wait), true once it is gone (focus moves), 'forget' when focus
 * should not move after all (the control stays, or the user has put focus elsewhere).
 */
export type Removal = boolean | 'forget';

/**
 * Moves focus after an action removes or replaces the control that had it (WCAG 2.4.3;
 * without a move it falls to <body>), to the first of `targets` still in the page: what
 * took its place, then fallbacks (viewHeading; nowAt and inItsPlace find what took it).
 *
 * Only once `gone` says the old control is really gone: Preact runs a component's
 * pending effects before rendering it again, so an effect of a render from just before
 * the removal can run after the action, while the control is still in the page; moving
 * focus then would focus the very control about to go (or miss what replaces it), and
 * focus would fall to <body> with it. `gone` and `targets` are the ones of the render the
 * effect belongs to, so they read the props and state that rendered the DOM it sees.
 *
 * Returns `expect(removal)`, for the action to call as it starts the removal, with what
 * `gone` and `targets` need (the removed key, its index, a fallback found beforehand).
 * The check runs after every render, or with `deps` only when they change.
 */
export function useFocusAfterRemoval<T extends object>(
  gone: (removal: T) => Removal,
  targets: (removal: T) => Array<Element | null | undefined>,
  deps?: readonly unknown[],
): (removal: T) => void {
  const pending = useRef<T | null>(null);
  useEffect(() => {
    const removal = pending.current;
    if (removal === null) return;
    const state = gone(removal);
    if (state === false) return;
    pending.current = null;
    if (state === true) focusFirst(...targets(removal));
  }, deps);
  return (removal) => {
    pending.current = removal;
  };
}
