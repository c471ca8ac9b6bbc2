import { useEffect, useState } from 'preact/hooks';
import { useTitle } from '../document-title.ts';
import { ApiFailure, api, unwrap, type Link } from '../api.ts';
import { Confirm } from '../components/confirm.tsx';
import { ErrorBox } from '../components/error-box.tsx';
import { FilterChips } from '../components/filter-chips.tsx';
import { ListFailure } from '../components/list-failure.tsx';
import { TagLinks } from '../components/tag-links.tsx';
import { LinkActions } from '../components/link-actions.tsx';
import { Pager } from '../components/pager.tsx';
import { fmtDate, fmtInt, linkName } from '../format.ts';
import { href, pageOf, setQuery, type Location } from '../router.ts';
import { session } from '../session.ts';
import { useAction, useLoad } from '../use-load.ts';
import { TableScroll } from '../components/table-scroll.tsx';
import { announce } from '../components/status-region.tsx';
import { nowAt, viewHeading } from '../focus.ts';
import { useFocusAfterRemoval } from '../use-focus-after-removal.ts';
import { useQuerySelect } from '../query-select.ts';
import { allTags, useCampaignName, useKnownDomains } from '../all-pages.ts';
import { invalidateList } from '../list-cache.ts';
import { linkStatus, linkStatusLabels, type KnownDomains } from '../link-status.ts';
import { carriedTo } from '../filters.ts';
import { tagNormalForm } from '../../../../shared/schemas/tag-normal-form.ts';

/**
 * Enable/disable and delete, shared by the list and the link page. `onGone`: a link
 * acted on is no more, deleted here or found deleted elsewhere (a 404, or a 410 to a
 * delete, after which `onChanged` reads the view afresh), so its row is about to go.
 */
export function useLinkMutations(onChanged: () => void, onGone?: (link: Link) => void) {
  const { error, run, fail } = useAction(onChanged);
  const [deleting, setDeleting] = useState<Link | null>(null);
  const reportingGone = async (link: Link, request: Promise<unknown>) => {
    try {
      await request;
    } catch (err) {
      if (err instanceof ApiFailure && (err.status === 404 || err.status === 410)) onGone?.(link);
      throw err;
    }
  };
  const toggle = (link: Link) => run(() => reportingGone(link, unwrap(api.PATCH('/links/{id}', { params: { path: { id: link.id } }, body: { enabled: !link.enabled } }))));
  const confirmDelete = (after?: (link: Link) => void) =>
    run(async () => {
      const link = deleting!;
      setDeleting(null);
      await reportingGone(link, unwrap(api.DELETE('/links/{id}', { params: { path: { id: link.id } } })));
      // Its tags count one link fewer, and a tag it alone carried is gone.
      if (link.tags.length > 0) invalidateList('tags');
      announce(`Link ${linkName(link)} deleted`);
      onGone?.(link);
      after?.(link);
    });
  const dialog = (after?: (link: Link) => void) => (
    <Confirm open={deleting !== null} title="Delete this link?" confirmLabel="Delete link" onCancel={() => setDeleting(null)} onConfirm={() => confirmDelete(after)}>
      <p>
        <strong>{deleting && linkName(deleting)}</strong> will stop redirecting at once. Its history stays readable, and its short code is never given out again.
      </p>
    </Confirm>
  );
  /** A QR code of the link refused as stale (LinkActions' onStale): said and read afresh as a toggle's refusal is. */
  const stale = (link: Link, err: ApiFailure) => {
    if (err.status === 404 || err.status === 410) onGone?.(link);
    fail(err);
  };
  return { error, toggle, askDelete: setDeleting, dialog, stale };
}

export function LinksView({ loc }: { loc: Location }) {
  useTitle('Links');
  const q = loc.query.get('q') ?? '';
  const page = pageOf(loc.query);
  const campaignId = loc.query.get('campaignId') ?? undefined;
  // `tag=a,b`: links with any of them, as GET /links reads it (plain commas: tags have
  // none, and may hold a backslash) and spells them (`Sale` is `sale`).
  const tag = loc.query.get('tag') || undefined;
  const tagValues = tag ? [...new Set(tag.split(',').map(tagNormalForm))] : [];
  const [search, setSearch] = useState(q);
  // The box follows the address (Back, a tag's link, a link carrying another search).
  useEffect(() => setSearch(q), [q]);
  const links = useLoad((signal) => unwrap(api.GET('/links', { params: { query: { q: q || undefined, page, limit: 20, campaignId, tag } }, signal })), [q, page, campaignId, tag]);
  const tags = useLoad(allTags, []);
  // A campaign's links (its Links button): the chip says which, by name, and takes it away.
  const campaignName = useCampaignName(campaignId);
  const domains = useKnownDomains(links.data?.data);
  const linkCounts = new Map(tags.data?.map((t) => [t.name, t.linkCount]) ?? []);
  const tagNames = [...new Set([...linkCounts.keys(), ...tagValues])];
  // A link's row that goes (deleted here, or found deleted elsewhere) takes its buttons
  // with it: focus moves to the Delete button of the row that takes its place (else the
  // one before, else the heading), once the list has been read again. Checked as the
  // list changes, not on every render: when a link is reported gone, its reload has not
  // started yet and the list still holds it. A link still listed once read again stays.
  const expectGone = useFocusAfterRemoval<{ id: string; index: number }>(
    (row) => (links.loading ? false : links.data?.data.some((l) => l.id === row.id) ? 'forget' : true),
    (row) => [nowAt(document.querySelectorAll('.links-table tbody tr[data-link-id]'), row.index)?.querySelector('button[data-delete]'), viewHeading()],
    [links.data, links.loading],
  );
  // The tag picker too: a deleted link may take a tag away (a cache hit, no request, after a toggle).
  const mutations = useLinkMutations(
    () => {
      links.reload();
      tags.reload();
    },
    (link) => expectGone({ id: link.id, index: links.data?.data.findIndex((l) => l.id === link.id) ?? 0 }),
  );
  const canWrite = session.can('links:write');
  const tagSelect = useQuerySelect('tag', tagValues.length === 1 ? tagValues[0]! : '');

  // A page past the last (its last link deleted, an old bookmark, a typed ?page=99)
  // shows the last page instead, in place of this address.
  const lastPage = links.data?.pagination.totalPages ?? 0;
  useEffect(() => {
    if (!links.loading && lastPage > 0 && page > lastPage) setQuery({ page: String(lastPage) }, { replace: true });
  }, [links.loading, lastPage, page]);

  return (
    <>
      <header class="view-header">
        <h1>Links</h1>
        {canWrite && (
          <a class="button primary" href={href('links/new', { campaignId })}>
            Create link
          </a>
        )}
      </header>
      <form
        class="search"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setQuery({ q: search.trim() });
        }}
      >
        <label for="link-search">Search links</label>
        <input id="link-search" type="search" value={search} onInput={(e) => setSearch(e.currentTarget.value)} placeholder="Title, short code or destination" />
        <button type="submit">Search</button>
        <label for="link-tag">Tag</label>
        <select id="link-tag" {...tagSelect}>
          <option value="">{tagValues.length > 1 ? `${tagValues.length} tags` : 'All tags'}</option>
          {tagNames.map((name) => (
            <option key={name} value={name}>
              {linkCounts.has(name) ? `${name} (${linkCounts.get(name)})` : name}
            </option>
          ))}
        </select>
        <ListFailure what="Tags" error={tags.error} onRetry={tags.reload} />
      </form>
      {/* tag is an analytics dimension too: its chips are FilterChips' own, and the same filter on the overview is one link away. */}
      <FilterChips loc={loc} extra={campaignId ? [{ name: 'campaignId', label: `Campaign: ${campaignName}` }] : []} />
      {tag && session.can('analytics:read') && (
        <p>
          <a href={href('', { tag })}>Analytics of links tagged {tagValues.join(' or ')}</a>
        </p>
      )}
      {mutations.error && <ErrorBox error={mutations.error} />}
      {links.error && <ErrorBox error={links.error} onRetry={links.reload} />}
      {!links.data && !links.error && <p class="loading">Loading links…</p>}
      {links.data && (
        <>
          <TableScroll label={'Links'} busy={links.loading}>
            <table class="links-table">
              <caption class="visually-hidden">Links</caption>
              <thead>
                <tr>
                  <th scope="col">Title</th>
                  <th scope="col">Short code</th>
                  <th scope="col">Destination</th>
                  <th scope="col">Tags</th>
                  <th scope="col" class="num">
                    Clicks
                  </th>
                  <th scope="col">Created</th>
                  <th scope="col">Status</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {links.data.data.length === 0 && (
                  <tr>
                    <td colSpan={8} class="muted">
                      {lastPage > 0 && page > lastPage ? (
                        <>
                          No links on this page. <a href={href('links', { q: q || undefined, campaignId, tag, page: String(lastPage) })}>Go to the last page</a>
                        </>
                      ) : q || tag || campaignId ? (
                        'No link matches these filters.'
                      ) : (
                        'No links yet.'
                      )}
                    </td>
                  </tr>
                )}
                {links.data.data.map((link) => (
                  <tr key={link.id} data-link-id={link.id}>
                    <td>
                      <a href={href(`links/${link.id}`, carriedTo(session.state().me?.workspace.id ?? '', 'link'))}>{link.title || <span class="muted">(untitled)</span>}</a>
                    </td>
                    <td data-label="Short code">
                      <code>{linkName(link)}</code>
                    </td>
                    {/* What visitors get when no rule decides (defaultDestination, destinationUrl when unset). */}
                    <td class="truncate" title={link.defaultDestination} data-label="Destination">
                      {link.defaultDestination}
                    </td>
                    <td data-label="Tags">
                      <TagLinks tags={link.tags} />
                    </td>
                    <td class="num" data-clicks data-label="Clicks">
                      {fmtInt(link.clicks)}
                    </td>
                    <td data-label="Created">{fmtDate(link.createdAt)}</td>
                    {/* data-domain-checked: the status has read the domains, or given up on them (tests wait for it). */}
                    <td data-label="Status" data-domain-checked={link.domainId !== null && domains !== 'loading' ? '' : undefined}>
                      {statusCell(link, domains)}
                    </td>
                    <td class="row-actions">
                      <LinkActions link={link} onStale={(err) => mutations.stale(link, err)} />
                      {canWrite && (
                        <>
                          <a class="button" href={href(`links/${link.id}/edit`)} aria-label={`Edit ${linkName(link)}`}>
                            Edit
                          </a>
                          <button type="button" onClick={() => mutations.toggle(link)} aria-label={`${link.enabled ? 'Disable' : 'Enable'} ${linkName(link)}`}>
                            {link.enabled ? 'Disable' : 'Enable'}
                          </button>
                          <button type="button" class="danger" data-delete onClick={() => mutations.askDelete(link)} aria-label={`Delete ${linkName(link)}`}>
                            Delete
                          </button>
                        </>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
          <Pager pagination={links.data.pagination} label="links" />
        </>
      )}
      {mutations.dialog()}
    </>
  );
}

/** Enabled only while the link redirects to its destination: an expired or used-up link, or one whose domain does not serve, says so in words. */
function statusCell(link: Link, domains: KnownDomains) {
  const status = linkStatus(link, Date.now(), domains);
  return status === 'enabled' ? linkStatusLabels.enabled : <span class="muted">{linkStatusLabels[status]}</span>;
}
