import { ApiFailure, api, unwrap, type Campaign } from './api.ts';
import { cachedList, dropLists } from './list-cache.ts';
import type { KnownDomains, WorkspaceDomains } from './link-status.ts';
import { session } from './session.ts';
import { useLoad } from './use-load.ts';

/** The API pages lists by at most 100; a picker stops at this many pages (1,000 items) rather than spend the workspace's rate limit. */
const MAX_PAGES = 10;
const LIMIT = 100;
/** As many items as allPages reads: a list this long may have been cut. */
const MAX_ITEMS = MAX_PAGES * LIMIT;

/**
 * Every item of a paginated list, up to 1,000: a picker that shows only the first
 * page hides the rest (a campaign with traffic that cannot be chosen). The first
 * page says how many there are; the others are asked together.
 */
export async function allPages<T>(load: (page: number, limit: number) => Promise<{ data: T[]; pagination: { totalPages: number } }>): Promise<T[]> {
  const first = await load(1, LIMIT);
  const pages = Math.min(first.pagination.totalPages, MAX_PAGES);
  const rest = await Promise.all(Array.from({ length: Math.max(0, pages - 1) }, (_, i) => load(i + 2, LIMIT)));
  return [first, ...rest].flatMap((p) => p.data);
}

/** Whose lists these are: the signed-in key's id ('' signed out), never the key itself. */
const owner = () => session.state().me?.key.id ?? '';

// Signing out, or in with another key, drops every kept list and aborts the loads still
// out: a page of the last key's list must not go out with the next key's credentials,
// nor its answer be kept. A restore of the same key (GET /me again) changes nothing.
let listsOwner = owner();
session.subscribe(() => {
  if (owner() === listsOwner) return;
  listsOwner = owner();
  dropLists();
});

/**
 * The signed-in key as a header, read once when a load starts, so each of its pages
 * goes with the key it is kept for (dropLists aborts it when that key leaves). Signed
 * out: none, as the client then sends.
 */
function asSignedIn(): { Authorization?: string } {
  const key = session.key();
  return key === null ? {} : { Authorization: `Bearer ${key}` };
}

/**
 * Every campaign and every tag, for pickers: kept for a minute per signed-in key and
 * shared by every picker of the tab (list-cache.ts), so mounting one costs no
 * request most of the time. A picker's own signal does not cancel the load: others
 * may be waiting on it.
 */
export const allCampaigns = () =>
  cachedList('campaigns', owner(), (signal) => {
    const headers = asSignedIn();
    return allPages((page, limit) => unwrap(api.GET('/campaigns', { params: { query: { page, limit } }, headers, signal })));
  });

export const allTags = () =>
  cachedList('tags', owner(), (signal) => {
    const headers = asSignedIn();
    return allPages((page, limit) => unwrap(api.GET('/tags', { params: { query: { page, limit } }, headers, signal })));
  });

/**
 * The workspace's domains for the links' statuses: every one not deleted (GET /domains
 * lists no deleted one), and which of them are verified, the ones redirectors serve. A
 * link on a domain not among them was on a deleted one. Kept as the pickers' lists are.
 */
export const workspaceDomains = () =>
  cachedList('domains', owner(), async (signal): Promise<WorkspaceDomains | undefined> => {
    const headers = asSignedIn();
    const domains = await allPages((page, limit) => unwrap(api.GET('/domains', { params: { query: { page, limit } }, headers, signal })));
    // Cut at the cap, the older domains would read as deleted: unknown instead.
    if (domains.length >= MAX_ITEMS) return undefined;
    return { live: new Set(domains.map((d) => d.id)), verified: new Set(domains.filter((d) => d.status === 'verified').map((d) => d.id)) };
  });

/**
 * The workspace's domains when `links` has one on a custom domain (else no request, and
 * nothing to know): 'loading' until read, 'unknown' when they could not be (the load
 * failed, or the list was cut), when a link on a custom domain claims no status.
 */
export function useKnownDomains(links: ReadonlyArray<{ domainId: string | null }> | undefined): KnownDomains {
  const needed = links?.some((l) => l.domainId !== null) ?? false;
  const loaded = useLoad((signal) => (needed ? workspaceDomains() : Promise.resolve(undefined)), [needed]);
  // A failed reload keeps the domains read before (useLoad): still the best known.
  if (loaded.data) return loaded.data;
  return loaded.loading ? 'loading' : 'unknown';
}

/** A campaign by id, or null when no campaign has it (deleted, a typo in a bookmarked URL). */
async function campaignById(id: string, signal: AbortSignal): Promise<Campaign | null> {
  try {
    return (await unwrap(api.GET('/campaigns/{id}', { params: { path: { id } }, signal }))).data;
  } catch (err) {
    if (err instanceof ApiFailure && err.status === 404) return null;
    throw err;
  }
}

/** A filter chip's campaign name: the campaign's, or its id until it loads or when none has it (deleted, no access). */
export function useCampaignName(id: string | undefined): string | undefined {
  const campaign = useLoad((signal) => (id ? campaignById(id, signal) : Promise.resolve(null)), [id]);
  return id === undefined ? undefined : (campaign.data?.name ?? id);
}

/**
 * The campaigns to pick from, with `selectedId` among them even past the cap (a
 * bookmarked filter, a link's own campaign): asked by id once the list lacks it.
 * The list is the tab's kept one (allCampaigns); choosing another campaign asks nothing more.
 */
export function useCampaignOptions(selectedId: string | undefined): { campaigns: Campaign[] | undefined; nameOf(id: string): string; error: ApiFailure | undefined; reload(): void } {
  const list = useLoad(allCampaigns, []);
  const missing = selectedId && list.data && !list.data.some((c) => c.id === selectedId) ? selectedId : undefined;
  const extra = useLoad((signal) => (missing ? campaignById(missing, signal) : Promise.resolve(null)), [missing]);
  const campaigns = list.data && extra.data && !list.data.some((c) => c.id === extra.data!.id) ? [...list.data, extra.data] : list.data;
  return { campaigns, nameOf: (id) => campaigns?.find((c) => c.id === id)?.name ?? id, error: list.error, reload: list.reload };
}
