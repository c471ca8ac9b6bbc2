import { api, unwrap } from '../api.ts';
import { RangeControls, rangeFrom } from '../components/range-controls.tsx';
import { setQuery, type Location } from '../router.ts';
import { useLoad } from '../use-load.ts';
import { AnalyticsPanel, type OverviewFilters } from './analytics-panel.tsx';

const sourceLabels: Record<string, string> = { link: 'Link clicks only', qr: 'QR scans only' };

/** The workspace's analytics; every control and filter lives in the URL. */
export function OverviewView({ loc }: { loc: Location }) {
  const range = rangeFrom(loc.query);
  const source = loc.query.get('source');
  const filters: OverviewFilters = {
    campaignId: loc.query.get('campaignId') ?? undefined,
    source: source === 'link' || source === 'qr' ? source : undefined,
  };
  const campaigns = useLoad((signal) => unwrap(api.GET('/campaigns', { params: { query: { limit: '100' } }, signal })), []);
  const campaignName = (id: string) => campaigns.data?.data.find((c) => c.id === id)?.name ?? id;

  const chips: Array<{ name: string; label: string }> = [];
  if (filters.campaignId) chips.push({ name: 'campaignId', label: `Campaign: ${campaignName(filters.campaignId)}` });
  if (filters.source) chips.push({ name: 'source', label: sourceLabels[filters.source]! });

  return (
    <>
      <header class="view-header">
        <h1>Overview</h1>
        <RangeControls range={range} />
      </header>
      <div class="filters" aria-label="Filters">
        <label>
          Campaign{' '}
          <select value={filters.campaignId ?? ''} onChange={(e) => setQuery({ campaignId: e.currentTarget.value })}>
            <option value="">All campaigns</option>
            {campaigns.data?.data.map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Source{' '}
          <select value={filters.source ?? ''} onChange={(e) => setQuery({ source: e.currentTarget.value })}>
            <option value="">Links and QR codes</option>
            <option value="link">{sourceLabels.link}</option>
            <option value="qr">{sourceLabels.qr}</option>
          </select>
        </label>
        <ul class="chips" aria-label="Active filters">
          {chips.map((chip) => (
            <li key={chip.name}>
              <span>{chip.label}</span>
              <button type="button" aria-label={`Remove filter ${chip.label}`} onClick={() => setQuery({ [chip.name]: undefined })}>
                ×
              </button>
            </li>
          ))}
        </ul>
      </div>
      <AnalyticsPanel range={range} filters={filters} />
    </>
  );
}
