import { FilterChips } from '../components/filter-chips.tsx';
import { RangeControls, type Range } from '../components/range-controls.tsx';
import { carriedQuery, filtersFrom } from '../filters.ts';
import { href, type Location } from '../router.ts';
import { AnalyticsPanel } from './analytics-panel.tsx';

/** The link's click log or conversions, over the period, zone and filters shown here. */
function linkedView(query: URLSearchParams, view: 'clicks' | 'conversions', linkId: string): string {
  const carried = carriedQuery(query, view);
  carried.set('linkId', linkId);
  return href(view, carried);
}

/**
 * A link's analytics on its page, live or deleted: the period and filters the URL
 * carries, the figures, and the way on to its click log and conversions.
 */
export function LinkAnalyticsSection({ loc, linkId, range, realtime }: { loc: Location; linkId: string; range: Range; realtime: boolean }) {
  return (
    <section aria-labelledby="link-analytics">
      <div class="section-header">
        <h2 id="link-analytics">Analytics</h2>
        <RangeControls range={range} />
      </div>
      <FilterChips loc={loc} />
      <AnalyticsPanel range={range} filters={{ linkId, dimensions: filtersFrom(loc.query) }} loc={loc} realtime={realtime} />
      <p>
        <a href={linkedView(loc.query, 'clicks', linkId)}>Click log of this link</a> · <a href={linkedView(loc.query, 'conversions', linkId)}>Its conversions</a>
      </p>
    </section>
  );
}
