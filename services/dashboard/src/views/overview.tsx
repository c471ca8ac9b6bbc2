import { useCampaignOptions } from '../all-pages.ts';
import { useTitle } from '../document-title.ts';
import { FilterChips } from '../components/filter-chips.tsx';
import { ListFailure } from '../components/list-failure.tsx';
import { RangeControls, rangeFrom } from '../components/range-controls.tsx';
import { filtersFrom } from '../filters.ts';
import type { Location } from '../router.ts';
import { useQuerySelect } from '../query-select.ts';
import { AnalyticsPanel, type OverviewFilters } from './analytics-panel.tsx';

/** The workspace's analytics; every control and filter lives in the URL. */
export function OverviewView({ loc }: { loc: Location }) {
  useTitle('Overview');
  const range = rangeFrom(loc.query);
  const filters: OverviewFilters = { campaignId: loc.query.get('campaignId') ?? undefined, dimensions: filtersFrom(loc.query) };
  const { campaigns, nameOf: campaignName, error: campaignsError, reload: reloadCampaigns } = useCampaignOptions(filters.campaignId);
  const campaignSelect = useQuerySelect('campaignId', filters.campaignId ?? '');

  return (
    <>
      <header class="view-header">
        <h1>Overview</h1>
        <RangeControls range={range} />
      </header>
      <div class="filters">
        <span class="inline-field">
          <label for="overview-campaign">Campaign</label>
          <select id="overview-campaign" {...campaignSelect}>
            <option value="">All campaigns</option>
            {campaigns?.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </select>
          <ListFailure what="Campaigns" error={campaignsError} onRetry={reloadCampaigns} />
        </span>
        <FilterChips loc={loc} extra={filters.campaignId ? [{ name: 'campaignId', label: `Campaign: ${campaignName(filters.campaignId)}` }] : []} />
      </div>
      <AnalyticsPanel range={range} filters={filters} loc={loc} realtime />
    </>
  );
}
