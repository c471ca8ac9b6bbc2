import { session } from '../session.ts';
import { ApiFailure, api, unwrap } from '../api.ts';
import { href } from '../router.ts';
import { carriedQuery } from '../filters.ts';
import { linkName } from '../format.ts';

/**
 * How a page's links are named, `/code` (`host/code` on a custom domain: codes are unique
 * per domain), asked only for links not in `known` (a live poll's new rows are mostly of
 * links already named). A key without links:read never asks; a link not listed (null in
 * `known`) is deleted. The rows read on regardless.
 */
export async function linkNamesOf(linkIds: string[], known: Map<string, string | null>, signal: AbortSignal): Promise<Map<string, string | null>> {
  const ids = [...new Set(linkIds)].filter((id) => !known.has(id));
  if (ids.length === 0 || !session.can('links:read')) return known;
  try {
    const links = await unwrap(api.GET('/links', { params: { query: { ids: ids.join(','), limit: 100 } }, signal }));
    const found = new Map(links.data.map((l) => [l.id, linkName(l)]));
    for (const id of ids) known.set(id, found.get(id) ?? null);
  } catch (err) {
    // A rate limit or an outage: the ids show, and the next load asks again. Anything
    // else (a refused or malformed request) is a fault to show.
    if (!(err instanceof ApiFailure) || (err.status !== 0 && err.status !== 429 && err.status < 500)) throw err;
  }
  return known;
}

/** A link's page, with the period, zone and filters of the view it is reached from (as the section links carry them). */
export function linkPageHref(id: string): string {
  return href(`links/${id}`, carriedQuery(new URLSearchParams(location.search), 'link'));
}

/**
 * A row's link: its short code, linked to its page; deleted (null: asked and not listed,
 * GET /links lists live links only), its id marked deleted, linked to its page, where its
 * history is still read; its id alone where it was never asked (the key may not read
 * links, or the names did not load), for that says nothing of whether it is deleted.
 */
export function LinkName({ id, names }: { id: string; names: Map<string, string | null> }) {
  const name = names.get(id);
  if (name) {
    return (
      <a href={linkPageHref(id)} title={id} aria-label={`Link ${name} (${id})`}>
        <code>{name}</code>
      </a>
    );
  }
  if (name === null) {
    return (
      <a href={linkPageHref(id)} aria-label={`Link ${id} deleted`} data-deleted-link={id}>
        <code>{id}</code> <span class="badge">deleted</span>
      </a>
    );
  }
  return <code>{id}</code>;
}
