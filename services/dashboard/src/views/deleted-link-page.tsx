import { api, unwrap, type ApiFailure } from '../api.ts';
import { ErrorBox } from '../components/error-box.tsx';
import { LinkPageHeader } from '../components/link-page-header.tsx';
import type { Range } from '../components/range-controls.tsx';
import { useTitle } from '../document-title.ts';
import type { Location } from '../router.ts';
import { useLoad } from '../use-load.ts';
import { ExperimentsSection } from './experiments.tsx';
import { LinkAnalyticsSection } from './link-analytics-section.tsx';
import { filtersFrom } from '../filters.ts';

/**
 * The page of a link GET /links/{id} no longer finds (`notFound`, its 404). Deleted, its
 * clicks stay in the reports, and the analytics API reads them by its id: an analyst
 * follows a retired link from its row in a report and reads its results here. Nothing
 * that edits: a deleted link is not changed any more. An id that names no link of the
 * workspace is "Link not found", as it was before.
 */
export function DeletedLinkPage({ loc, linkId, range, notFound }: { loc: Location; linkId: string; range: Range; notFound: ApiFailure }) {
  // Only the analytics API tells a deleted link (200) from none (404): asked once, before
  // the page says the link was deleted, over the API's default period. Not the carried
  // one: whether the link exists does not depend on it, and a period the API refuses (a
  // click log's span of years) would leave this page an error with nothing to change it;
  // the panel below shows that refusal beside its own range controls instead.
  const history = useLoad((signal) => unwrap(api.GET('/analytics/{linkId}', { params: { path: { linkId } }, signal })), [linkId]);
  const found = history.data !== undefined;
  useTitle(found ? `Deleted link ${linkId}` : 'Link');

  if (history.error?.status === 404) return <ErrorBox error={notFound} onRetry={history.reload} />;
  if (history.error && !found) return <ErrorBox error={history.error} onRetry={history.reload} />;
  if (!found) return <p class="loading">Loading link…</p>;
  return (
    <>
      <LinkPageHeader title="Deleted link" />
      <p class="notice" data-deleted-link={linkId}>
        This link was deleted: it no longer redirects, and it cannot be edited. Its clicks and conversions stay in the reports, shown here.
      </p>
      <dl class="facts">
        <div>
          <dt>Status</dt>
          <dd>Deleted</dd>
        </div>
        <div>
          <dt>Link id</dt>
          <dd>
            <code>{linkId}</code>
          </dd>
        </div>
      </dl>
      {/* No realtime strip: a deleted link gets no more clicks. */}
      <LinkAnalyticsSection loc={loc} linkId={linkId} range={range} realtime={false} />
      <ExperimentsSection linkId={linkId} range={range} filters={filtersFrom(loc.query)} />
    </>
  );
}
