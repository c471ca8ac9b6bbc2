import { useState } from 'preact/hooks';
import { useTitle } from '../document-title.ts';
import { ApiFailure, api, unwrap, type Domain } from '../api.ts';
import { Confirm } from '../components/confirm.tsx';
import { ErrorBox } from '../components/error-box.tsx';
import { InlineForm } from '../components/inline-form.tsx';
import { fmtDateTime } from '../format.ts';
import { session } from '../session.ts';
import { useAction, useLoad } from '../use-load.ts';
import { invalidateList } from '../list-cache.ts';
import { TableScroll } from '../components/table-scroll.tsx';
import { inItsPlace, viewHeading } from '../focus.ts';
import { useFocusAfterRemoval } from '../use-focus-after-removal.ts';

const statusText: Record<Domain['status'], string> = { pending: 'Waiting for DNS', verified: 'Verified', failed: 'Verification failed' };

const verifyLabel = (d: Domain, checking: boolean) => (checking ? 'Checking DNS…' : d.status === 'verified' ? 'Verify again' : 'Verify');

interface DnsRecord {
  type: string;
  name: string;
  value: string;
  purpose: string;
}

/** What to publish: the TXT record that proves the domain is yours, and the record that routes its visitors (when the API can name one). */
function recordsOf(d: Domain): DnsRecord[] {
  const records: DnsRecord[] = [{ ...d.verification, purpose: 'Proves the domain is yours (Verify looks it up)' }];
  if (d.routing) records.push({ ...d.routing, purpose: 'Sends its visitors to linkroute’s redirectors' });
  return records;
}

/** A record as a zone-file line, for providers (and BIND files) that take one: TXT quoted, a CNAME target fully qualified. */
const zoneLine = (r: DnsRecord) => `${r.name}. 300 IN ${r.type} ${r.type === 'TXT' ? `"${r.value}"` : r.type === 'CNAME' ? `${r.value}.` : r.value}`;

function ZoneLines({ domain, records }: { domain: Domain; records: DnsRecord[] }) {
  const [copied, setCopied] = useState('');
  return (
    <div class="zone-line">
      <span class="muted">As zone-file lines:</span>
      <pre>
        {records.map((r) => (
          <code key={r.type} data-zone-line={r.type}>
            {zoneLine(r)}
          </code>
        ))}
      </pre>
      <button
        type="button"
        aria-label={`Copy value of the TXT record for ${domain.hostname}`}
        onClick={() =>
          // Clipboard access needs a secure context (no navigator.clipboard on plain HTTP) or
          // permission: else show the value to copy by hand.
          (navigator.clipboard?.writeText(domain.verification.value) ?? Promise.reject(new Error('no clipboard'))).then(
            () => setCopied('Value copied'),
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
  useTitle('Domains');
  const domains = useLoad((signal) => unwrap(api.GET('/domains', { params: { query: { limit: 100 } }, signal })), []);
  const [hostname, setHostname] = useState('');
  // Every change may start or stop a domain serving: the links' statuses read it afresh.
  const { error, busy, run } = useAction(() => {
    invalidateList('domains');
    domains.reload();
  });
  const [deleting, setDeleting] = useState<Domain | null>(null);
  const expectGoing = useFocusAfterRemoval<{ gone: string; selector: string }>(
    (target) => !domains.loading && !domains.data?.data.some((d) => d.id === target.gone),
    (target) => [document.querySelector(target.selector), viewHeading()],
    [domains.data, domains.loading],
  );
  /**
   * `d`'s card goes once the list is read again, and the button of it that had focus with
   * it: focus then goes to the same button of the domain in its place, else the hostname
   * field, else the heading.
   */
  const refocusAfterGoing = (d: Domain, button: 'verify' | 'delete') => {
    const next = inItsPlace(domains.data?.data ?? [], d.id);
    expectGoing({ gone: d.id, selector: next ? `section[data-domain="${CSS.escape(next.hostname)}"] button[data-${button}]` : '#domain-hostname' });
  };
  // What the last add or verification found, in words (announced to screen readers).
  const [outcome, setOutcome] = useState('');
  const canWrite = session.can('domains:write');
  const verify = (d: Domain) =>
    run(async () => {
      setOutcome('');
      let data: Domain;
      try {
        ({ data } = await unwrap(api.POST('/domains/{id}/verify', { params: { path: { id: d.id } } })));
      } catch (err) {
        if (!(err instanceof ApiFailure) || err.status !== 404) throw err;
        // Deleted elsewhere (another tab, an API client): nothing went wrong here, so it is
        // said in the status line, not as a refusal; the list is read again (run does so
        // after an action), its card goes, and focus moves as after a deletion here.
        refocusAfterGoing(d, 'verify');
        setOutcome(`${d.hostname} was deleted elsewhere (another tab or an API client): its card is gone.`);
        return;
      }
      setOutcome(
        data.status !== 'verified'
          ? `${data.hostname} is not verified yet: ${data.failureReason ?? 'the record was not found'}.`
          : data.failingSince
            ? `${data.hostname} stays verified for now, but its TXT record was not found: publish it again.`
            : `${data.hostname} is verified: links may use it now.`,
      );
    }, d.id);

  return (
    <>
      <header class="view-header">
        <h1>Domains</h1>
      </header>
      {canWrite && (
        <InlineForm
          onSubmit={() =>
            busy === null &&
            void run(async () => {
              setOutcome('');
              const { data } = await unwrap(api.POST('/domains', { body: { hostname: hostname.trim() } }));
              setHostname('');
              setOutcome(`Added ${data.hostname}. Publish its TXT record below, then verify.`);
            }, 'add')
          }
        >
          <label for="domain-hostname">Hostname</label>
          <input id="domain-hostname" value={hostname} onInput={(e) => setHostname(e.currentTarget.value)} placeholder="go.example.com" required />
          {/* aria-disabled, not disabled, while busy: a disabled button drops focus (WCAG 2.4.3). */}
          <button type="submit" class="primary" aria-disabled={busy !== null ? 'true' : undefined}>
            Add domain
          </button>
        </InlineForm>
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
            {d.status !== 'verified' ? (
              <p>Publish these DNS records at your DNS provider, then verify:</p>
            ) : (
              <p>Keep these DNS records published: linkroute checks the TXT record again regularly (daily, unless this server sets another period).</p>
            )}
            {d.failingSince && (
              <p class="notice" data-failing-since={d.failingSince}>
                The regular checks have not found the TXT record since {fmtDateTime(d.failingSince)}. Publish it again: a domain whose record stays missing for the grace period (a week unless this server sets another) loses its verification, and its links stop redirecting.
              </p>
            )}
            <TableScroll label={`DNS records of ${d.hostname}`}>
              <table class="dns-record">
                <thead>
                  <tr>
                    <th scope="col">Type</th>
                    <th scope="col">Name</th>
                    <th scope="col">Value</th>
                    <th scope="col">For</th>
                  </tr>
                </thead>
                <tbody>
                  {recordsOf(d).map((r) => (
                    <tr key={r.type} data-record={r.type}>
                      <td>{r.type}</td>
                      <td>
                        <code>{r.name}</code>
                      </td>
                      <td>
                        <code>{r.value}</code>
                      </td>
                      <td class="muted">{r.purpose}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableScroll>
            <ZoneLines domain={d} records={recordsOf(d)} />
            <p class="muted">
              {!d.routing && `Also point ${d.hostname} at the machines running the redirector (a CNAME, or A/AAAA records): this server’s default redirect domain is local, so linkroute cannot name the record. `}
              {d.verifiedAt ? `Verified ${fmtDateTime(d.verifiedAt)}.` : ''}
              {d.checkedAt ? ` Checked ${fmtDateTime(d.checkedAt)}.` : ''}
              {d.failureReason ? ` Last check: ${d.failureReason}` : ''}
            </p>
            {canWrite && (
              <div class="actions">
                <button type="button" data-verify aria-disabled={busy !== null ? 'true' : undefined} onClick={() => busy === null && verify(d)} aria-label={`${verifyLabel(d, busy === d.id)} ${d.hostname}`}>
                  {verifyLabel(d, busy === d.id)}
                </button>
                <button type="button" class="danger" data-delete onClick={() => setDeleting(d)} aria-label={`Delete ${d.hostname}`}>
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
          refocusAfterGoing(d, 'delete');
          void run(() => unwrap(api.DELETE('/domains/{id}', { params: { path: { id: d.id } } })), 'delete');
        }}
      >
        <p>Links on {deleting?.hostname} stop resolving at once. They stay readable with their history.</p>
      </Confirm>
    </>
  );
}
