import { session } from '../session.ts';
import { ApiFailure, api, unwrap } from '../api.ts';
import { href } from '../router.ts';
import { carriedQuery } from '../filters.ts';

/**
 * How a page's links are named, `/code` (`host/code` on a custom domain: codes are unique
 * per domain), asked only for links not in `known` (a live poll's new rows are mostly of
 * links already named). A key without links:read never asks; a link deleted since (null in
 * `known`) keeps its id. The rows read on regardless.
 */
export async function linkNamesOf(linkIds: string[], known: Map<string, string | null>, signal: AbortSignal): Promise<Map<string, string | null>> {
  const ids = [...new Set(linkIds)].filter((id) => !known.has(id));
  if (ids.length === 0 || !session.can('links:read')) return known;
  try {
    const links = await unwrap(api.GET('/links', { params: { query: { ids: ids.join(','), limit: 100 } }, signal }));
    const found = new Map(links.data.map((l) => [l.id, `${l.domainId ? l.redirectDomain : ''}/${l.shortCode}`]));
    for (const id of ids) known.set(id, found.get(id) ?? null);
  } catch (err) {
    // A rate limit or an outage: the ids show, and the next load asks again. Anything
    // else (a refused or malformed request) is a fault to show.
    if (!(err instanceof ApiFailure) || (err.status !== 0 && err.status !== 429 && err.status < 500)) throw err;
  }
  return known;
}

/**
 * A row's link: its short code, linked to its page (with the period, zone and filters of
 * the view it is in, as the section links carry them), or its id where it has no name
 * (deleted, or not readable).
 */
export function LinkName({ id, names }: { id: string; names: Map<string, string | null> }) {
  const name = names.get(id);
  return name ? (
    <a href={href(`links/${id}`, carriedQuery(new URLSearchParams(location.search), 'link'))} title={id} aria-label={`Link ${name} (${id})`}>
      <code>{name}</code>
    </a>
  ) : (
    <code>{id}</code>
  );
}
