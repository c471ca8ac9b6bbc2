import { useState } from 'preact/hooks';
import { api, unwrap, type Domain } from '../api.ts';
import { Confirm } from '../components/confirm.tsx';
import { ErrorBox } from '../components/error-box.tsx';
import { fmtDateTime } from '../format.ts';
import { session } from '../session.ts';
import { useAction, useLoad } from '../use-load.ts';

const statusText: Record<Domain['status'], string> = { pending: 'Waiting for DNS', verified: 'Verified', failed: 'Verification failed' };

const verifyLabel = (d: Domain, checking: boolean) => (checking ? 'Checking DNS…' : d.status === 'verified' ? 'Verify again' : 'Verify');

/** The record as a zone-file line, to paste into providers (and BIND files) that take one. */
function ZoneLine({ domain }: { domain: Domain }) {
  const [copied, setCopied] = useState('');
  const line = `${domain.verification.name}. 300 IN ${domain.verification.type} "${domain.verification.value}"`;
  return (
    <div class="zone-line">
      <span class="muted">As a zone-file line:</span>
      <pre>
        <code data-zone-line>{line}</code>
      </pre>
      <button
        type="button"
        aria-label={`Copy value of the TXT record for ${domain.hostname}`}
        onClick={() =>
          navigator.clipboard.writeText(domain.verification.value).then(
            () => setCopied('Value copied'),
            // Clipboard access needs a secure context or permission: show the value to copy by hand.
            () => window.prompt('Copy the TXT value', domain.verification.value),
          )
        }
      >
        Copy value
      </button>
      <span class="muted" role="status">
        {copied}
      </span>
    </div>
  );
}

/** Custom domains: the exact TXT record to publish, then verify. */
export function DomainsView() {
  const domains = useLoad((signal) => unwrap(api.GET('/domains', { params: { query: { limit: '100' } }, signal })), []);
  const [hostname, setHostname] = useState('');
  const { error, busy, run } = useAction(domains.reload);
  const [deleting, setDeleting] = useState<Domain | null>(null);
  // What the last add or verification found, in words (announced to screen readers).
  const [outcome, setOutcome] = useState('');
  const canWrite = session.can('domains:write');
  const verify = (d: Domain) =>
    run(async () => {
      setOutcome('');
      const { data } = await unwrap(api.POST('/domains/{id}/verify', { params: { path: { id: d.id } } }));
      setOutcome(data.status === 'verified' ? `${data.hostname} is verified: links may use it now.` : `${data.hostname} is not verified yet: ${data.failureReason ?? 'the record was not found'}.`);
    }, d.id);

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
              setOutcome('');
              const { data } = await unwrap(api.POST('/domains', { body: { hostname: hostname.trim() } }));
              setHostname('');
              setOutcome(`Added ${data.hostname}. Publish its TXT record below, then verify.`);
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
      <p class="outcome" role="status" data-outcome>
        {outcome}
      </p>
      {error && <ErrorBox error={error} />}
      {domains.error && <ErrorBox error={domains.error} onRetry={domains.reload} />}
      {!domains.data && !domains.error && <p class="loading">Loading domains…</p>}
      {domains.data?.data.length === 0 && <p class="muted">No custom domains. Links use the default redirect domain.</p>}
      <div class="domain-list">
        {domains.data?.data.map((d) => (
          <section class="card" key={d.id} aria-labelledby={`domain-${d.id}`} data-domain={d.hostname} data-status={d.status}>
            <div class="section-header">
              <h2 id={`domain-${d.id}`}>{d.hostname}</h2>
              <span class={`status-badge ${d.status}`}>{statusText[d.status]}</span>
            </div>
            {d.status !== 'verified' ? <p>Publish this DNS record at your DNS provider, then verify:</p> : <p>Keep this DNS record published: a later verification checks it again.</p>}
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
            <ZoneLine domain={d} />
            <p class="muted">
              Point the hostname itself (a CNAME or A record) at your redirectors. {d.verifiedAt ? `Verified ${fmtDateTime(d.verifiedAt)}.` : ''}
              {d.failureReason ? ` Last check: ${d.failureReason}` : ''}
            </p>
            {canWrite && (
              <div class="actions">
                <button type="button" disabled={busy !== null} onClick={() => verify(d)} aria-label={`${verifyLabel(d, busy === d.id)} ${d.hostname}`}>
                  {verifyLabel(d, busy === d.id)}
                </button>
                <button type="button" class="danger" onClick={() => setDeleting(d)} aria-label={`Delete ${d.hostname}`}>
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
