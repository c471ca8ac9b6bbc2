import { useState } from 'preact/hooks';
import { api, unwrap, type Domain } from '../api.ts';
import { Confirm } from '../components/confirm.tsx';
import { ErrorBox } from '../components/error-box.tsx';
import { fmtDateTime } from '../format.ts';
import { session } from '../session.ts';
import { useAction, useLoad } from '../use-load.ts';

const statusText: Record<Domain['status'], string> = { pending: 'Waiting for DNS', verified: 'Verified', failed: 'Verification failed' };

/** Custom domains: the exact TXT record to publish, then verify. */
export function DomainsView() {
  const domains = useLoad((signal) => unwrap(api.GET('/domains', { params: { query: { limit: '100' } }, signal })), []);
  const [hostname, setHostname] = useState('');
  const { error, busy, run } = useAction(domains.reload);
  const [deleting, setDeleting] = useState<Domain | null>(null);
  const canWrite = session.can('domains:write');

  return (
    <>
      <header class="view-header">
        <h1>Domains</h1>
      </header>
      {canWrite && (
        <form
          class="inline-form"
          onSubmit={(e) => {
            e.preventDefault();
            void run(async () => {
              await unwrap(api.POST('/domains', { body: { hostname: hostname.trim() } }));
              setHostname('');
            }, 'add');
          }}
        >
          <label for="domain-hostname">Hostname</label>
          <input id="domain-hostname" value={hostname} onInput={(e) => setHostname(e.currentTarget.value)} placeholder="go.example.com" required />
          <button type="submit" class="primary" disabled={busy !== null}>
            Add domain
          </button>
        </form>
      )}
      {error && <ErrorBox error={error} />}
      {domains.error && <ErrorBox error={domains.error} onRetry={domains.reload} />}
      {!domains.data && !domains.error && <p class="loading">Loading domains…</p>}
      {domains.data?.data.length === 0 && <p class="muted">No custom domains. Links use the default redirect domain.</p>}
      <div class="domain-list">
        {domains.data?.data.map((d) => (
          <section class="card" key={d.id} aria-labelledby={`domain-${d.id}`}>
            <div class="section-header">
              <h2 id={`domain-${d.id}`}>{d.hostname}</h2>
              <span class={`status-badge ${d.status}`}>{statusText[d.status]}</span>
            </div>
            {d.status !== 'verified' && <p>Publish this DNS record at your DNS provider, then verify:</p>}
            <div class="table-scroll">
              <table class="dns-record">
                <thead>
                  <tr>
                    <th scope="col">Type</th>
                    <th scope="col">Name</th>
                    <th scope="col">Value</th>
                  </tr>
                </thead>
                <tbody>
                  <tr>
                    <td>{d.verification.type}</td>
                    <td>
                      <code>{d.verification.name}</code>
                    </td>
                    <td>
                      <code>{d.verification.value}</code>
                    </td>
                  </tr>
                </tbody>
              </table>
            </div>
            <p class="muted">
              Point the hostname itself (a CNAME or A record) at your redirectors. {d.verifiedAt ? `Verified ${fmtDateTime(d.verifiedAt)}.` : ''}
              {d.failureReason ? ` Last check: ${d.failureReason}` : ''}
            </p>
            {canWrite && (
              <div class="actions">
                <button type="button" disabled={busy !== null} onClick={() => run(() => unwrap(api.POST('/domains/{id}/verify', { params: { path: { id: d.id } } })), d.id)}>
                  {busy === d.id ? 'Checking DNS…' : d.status === 'verified' ? 'Verify again' : 'Verify'}
                </button>
                <button type="button" class="danger" onClick={() => setDeleting(d)}>
                  Delete
                </button>
              </div>
            )}
          </section>
        ))}
      </div>
      <Confirm
        open={deleting !== null}
        title="Delete this domain?"
        confirmLabel="Delete domain"
        onCancel={() => setDeleting(null)}
        onConfirm={() => {
          const d = deleting!;
          setDeleting(null);
          void run(() => unwrap(api.DELETE('/domains/{id}', { params: { path: { id: d.id } } })), 'delete');
        }}
      >
        <p>Links on {deleting?.hostname} stop resolving at once. They stay readable with their history.</p>
      </Confirm>
    </>
  );
}
