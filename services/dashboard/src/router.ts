import { useEffect, useState } from 'preact/hooks';
import { focusElement } from './focus.ts';
import { changes } from './changes.ts';

/**
 * Client-side routes under /dashboard/ on the History API. The URL holds the
 * whole state of a view (range, filters, page), so every view can be bookmarked
 * and shared, and Back undoes a filter.
 */
export const BASE = '/dashboard';

export interface Location {
  /** Path below /dashboard, without leading or trailing slash: '', 'links', 'links/link_x'. */
  path: string;
  query: URLSearchParams;
}

const locationChanges = changes();

function read(): Location {
  const raw = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : '';
  return { path: raw.replace(/^\/+|\/+$/g, ''), query: new URLSearchParams(location.search) };
}

window.addEventListener('popstate', locationChanges.emit);

export function href(path: string, query?: URLSearchParams | Record<string, string | undefined>): string {
  const params = query instanceof URLSearchParams ? query : new URLSearchParams(Object.entries(query ?? {}).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''));
  const search = params.toString();
  return `${BASE}/${path}${search ? `?${search}` : ''}`;
}

/** The list page the URL asks for: a whole number from 1 (anything else is page 1). */
export function pageOf(query: URLSearchParams): number {
  const page = Number(query.get('page') ?? '1');
  return Number.isInteger(page) && page >= 1 ? page : 1;
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (to === location.pathname + location.search) return;
  if (options.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  locationChanges.emit();
}

export function useLocation(): Location {
  const [loc, setLoc] = useState(read);
  useEffect(() => {
    const update = () => setLoc(read());
    const unsubscribe = locationChanges.subscribe(update);
    // A child's effect runs before this one: a navigation it made is not missed.
    update();
    return unsubscribe;
  }, []);
  return loc;
}

/** Sets (or with undefined/'' removes) query parameters of the current view; page resets unless set. */
export function setQuery(patch: Record<string, string | undefined>, options: { replace?: boolean } = {}): void {
  const { path, query } = read();
  const next = new URLSearchParams(query);
  if (!('page' in patch)) next.delete('page');
  for (const [name, value] of Object.entries(patch)) {
    if (value === undefined || value === '') next.delete(name);
    else next.set(name, value);
  }
  navigate(href(path, next), options);
}

/** Intercepts plain left clicks on in-app anchors so they route without a page load. */
export function onLinkClick(event: MouseEvent): void {
  const anchor = (event.target as Element).closest('a');
  if (!anchor || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  if (anchor.target || anchor.hasAttribute('download') || anchor.origin !== location.origin || !anchor.pathname.startsWith(BASE)) return;
  // A link within this page (the skip link, an error summary's field): the browser
  // would only scroll, leaving focus behind (WCAG 2.4.1), so focus goes to the target.
  if (anchor.hash && anchor.pathname === location.pathname && anchor.search === location.search) {
    const target = document.getElementById(decodeURIComponent(anchor.hash.slice(1)));
    if (!target) return;
    event.preventDefault();
    focusElement(target);
    target.scrollIntoView({ block: 'start' });
    return;
  }
  event.preventDefault();
  navigate(anchor.pathname + anchor.search);
}
