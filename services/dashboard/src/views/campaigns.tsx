import { useEffect, useState } from 'preact/hooks';
import { useTitle } from '../document-title.ts';
import { api, unwrap, type Campaign } from '../api.ts';
import { ErrorBox } from '../components/error-box.tsx';
import { InlineForm } from '../components/inline-form.tsx';
import { Pager } from '../components/pager.tsx';
import { fmtDate } from '../format.ts';
import { href, pageOf, type Location } from '../router.ts';
import { session } from '../session.ts';
import { useAction, useLoad, type Action } from '../use-load.ts';
import { TableScroll } from '../components/table-scroll.tsx';
import { announce } from '../components/status-region.tsx';
import { useDeliberateSelect } from '../query-select.ts';
import { invalidateList } from '../list-cache.ts';

const statuses: Array<Campaign['status']> = ['active', 'paused', 'archived'];

/**
 * A campaign's status, saved on a deliberate choice: an option picked in the open
 * list (with the pointer, or with Enter after Alt+ArrowDown, Space or F4), or, after
 * browsing with the arrow keys on the closed field, Enter or leaving the field. Arrow
 * keys only browse (each would otherwise save: active, paused, archived in turn);
 * Escape goes back.
 */
function StatusSelect({ campaign, run }: { campaign: Campaign; run: Action['run'] }) {
  // The choice shows from the moment it is made until the list has reloaded with it (or the save failed).
  const [saving, setSaving] = useState<Campaign['status'] | null>(null);
  useEffect(() => setSaving(null), [campaign]);
  const save = (status: Campaign['status']) => {
    setSaving(status);
    void run(async () => {
      try {
        await unwrap(api.PATCH('/campaigns/{id}', { params: { path: { id: campaign.id } }, body: { status } }));
        // The pickers' kept list holds each campaign's status too.
        invalidateList('campaigns');
      } catch (err) {
        setSaving(null);
        throw err;
      }
    });
  };
  const select = useDeliberateSelect(saving ?? campaign.status, (value) => save(value as Campaign['status']), null);
  return (
    <select aria-label={`Status of ${campaign.name}`} {...select}>
      {statuses.map((s) => (
        <option key={s} value={s}>
          {s}
        </option>
      ))}
    </select>
  );
}

export function CampaignsView({ loc }: { loc: Location }) {
  useTitle('Campaigns');
  const page = pageOf(loc.query);
  const campaigns = useLoad((signal) => unwrap(api.GET('/campaigns', { params: { query: { page, limit: 20 } }, signal })), [page]);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const { error, run } = useAction(campaigns.reload);
  const canWrite = session.can('campaigns:write');

  return (
    <>
      <header class="view-header">
        <h1>Campaigns</h1>
      </header>
      {canWrite && (
        <InlineForm
          onSubmit={() =>
            void run(async () => {
              await unwrap(api.POST('/campaigns', { body: { name, description } }));
              invalidateList('campaigns');
              announce(`Campaign ${name} created`);
              setName('');
              setDescription('');
            })
          }
        >
          <label for="campaign-name">Name</label>
          <input id="campaign-name" value={name} onInput={(e) => setName(e.currentTarget.value)} required />
          <label for="campaign-description">Description</label>
          <input id="campaign-description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
          <button type="submit" class="primary">
            Create campaign
          </button>
        </InlineForm>
      )}
      {error && <ErrorBox error={error} />}
      {campaigns.error && <ErrorBox error={campaigns.error} onRetry={campaigns.reload} />}
      {campaigns.data && (
        <>
          <TableScroll label={'Campaigns'}>
            <table>
              <caption class="visually-hidden">Campaigns</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Description</th>
                  <th scope="col">Status</th>
                  <th scope="col">Created</th>
                  <th scope="col">Views</th>
                </tr>
              </thead>
              <tbody>
                {campaigns.data.data.map((c) => (
                  <tr key={c.id}>
                    <td>
                      {c.name}
                      {c.isDefault && <span class="badge">default</span>}
                    </td>
                    <td>{c.description}</td>
                    <td>
                      {canWrite ? (
                        <StatusSelect campaign={c} run={run} />
                      ) : (
                        c.status
                      )}
                    </td>
                    <td>{fmtDate(c.createdAt)}</td>
                    <td class="row-actions">
                      <a href={href('links', { campaignId: c.id })}>Links</a>
                      {session.can('analytics:read') && <a href={href('', { campaignId: c.id })}>Analytics</a>}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableScroll>
          <Pager pagination={campaigns.data.pagination} label="campaigns" />
        </>
      )}
    </>
  );
}
