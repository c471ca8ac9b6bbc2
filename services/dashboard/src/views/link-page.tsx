import { useRef, useState } from 'preact/hooks';
import { useTitle } from '../document-title.ts';
import { ApiFailure, api, unwrap, type Rule } from '../api.ts';
import { Confirm } from '../components/confirm.tsx';
import { ErrorBox } from '../components/error-box.tsx';
import { LinkActions } from '../components/link-actions.tsx';
import { LinkPageHeader } from '../components/link-page-header.tsx';
import { QrCodesSection } from '../components/qr-codes.tsx';
import { TagLinks } from '../components/tag-links.tsx';
import { rangeFrom } from '../components/range-controls.tsx';
import { fmtDateTime, linkName } from '../format.ts';
import { href, navigate, type Location } from '../router.ts';
import { session } from '../session.ts';
import { useAction, useLoad } from '../use-load.ts';
import { DeletedLinkPage } from './deleted-link-page.tsx';
import { LinkAnalyticsSection } from './link-analytics-section.tsx';
import { ExperimentsSection } from './experiments.tsx';
import { useLinkMutations } from './links.tsx';
import { RuleEditor, describeConditions } from './rule-editor.tsx';
import { TableScroll } from '../components/table-scroll.tsx';
import { inItsPlace } from '../focus.ts';
import { useFocusAfterRemoval } from '../use-focus-after-removal.ts';
import { announce } from '../components/status-region.tsx';
import { linkStatus, linkStatusLabels } from '../link-status.ts';
import { useKnownDomains } from '../all-pages.ts';
import { filtersFrom } from '../filters.ts';
import { byEvaluationOrder, prioritiesFor } from '../rule-order.ts';

export function LinkPageView({ loc, linkId }: { loc: Location; linkId: string }) {
  const link = useLoad(async (signal) => (await unwrap(api.GET('/links/{id}', { params: { path: { id: linkId } }, signal }))).data, [linkId]);
  const mutations = useLinkMutations(link.reload);
  const domains = useKnownDomains(link.data ? [link.data] : undefined);
  // Codes the header's QR buttons stored: the QR codes section lists them again.
  const [qrMade, setQrMade] = useState(0);
  const canReadAnalytics = session.can('analytics:read');
  // GET /links/{id} answers 404 for a deleted link as for no link at all: where the key
  // may read analytics, the deleted link's page tells the two apart and titles itself.
  // A 404 on a reload too (the link deleted elsewhere, found by a change this page made):
  // the link shown before is gone, not merely unreadable for now.
  const gone = link.error?.status === 404;
  const maybeDeleted = gone && canReadAnalytics;
  useTitle(link.data && !gone ? `Link ${linkName(link.data)}` : maybeDeleted ? null : 'Link');
  const range = rangeFrom(loc.query);

  if (maybeDeleted) return <DeletedLinkPage loc={loc} linkId={linkId} range={range} notFound={link.error!} />;
  if (link.error && (!link.data || gone)) return <ErrorBox error={link.error} onRetry={link.reload} />;
  if (!link.data) return <p class="loading">Loading link…</p>;
  const l = link.data;
  const canWrite = session.can('links:write');

  return (
    <>
      <LinkPageHeader
        title={l.title || linkName(l)}
        actions={
          <div class="row-actions">
            <LinkActions link={l} onQrMade={() => setQrMade((n) => n + 1)} onStale={(err) => mutations.stale(l, err)} />
            {canWrite && (
              <>
                <a class="button" href={href(`links/${l.id}/edit`)}>
                  Edit
                </a>
                <button type="button" onClick={() => mutations.toggle(l)}>
                  {l.enabled ? 'Disable' : 'Enable'}
                </button>
                <button type="button" class="danger" onClick={() => mutations.askDelete(l)}>
                  Delete
                </button>
              </>
            )}
          </div>
        }
      >
        <p class="short-url">
          <a href={l.shortUrl} rel="noreferrer">
            {l.shortUrl}
          </a>{' '}
          {/* Where visitors go when no rule decides: defaultDestination (the API fills it with destinationUrl when unset). Whole, wrapping: a cut URL hides the part that differs. */}
          → <span class="destination" data-destination>{l.defaultDestination}</span>
        </p>
      </LinkPageHeader>
      {mutations.error && <ErrorBox error={mutations.error} />}
      <dl class="facts">
        <div>
          <dt>Status</dt>
          <dd>{linkStatusLabels[linkStatus(l, Date.now(), domains)]}</dd>
        </div>
        <div>
          <dt>Redirect</dt>
          <dd>{l.redirectBehavior}</dd>
        </div>
        <div>
          <dt>Expires</dt>
          <dd>{l.expiresAt ? fmtDateTime(l.expiresAt) : 'Never'}</dd>
        </div>
        <div>
          <dt>Clicks limit</dt>
          <dd>{l.clicksLimit ?? 'None'}</dd>
        </div>
        <div>
          <dt>Password</dt>
          <dd>{l.password ? 'Set' : 'None'}</dd>
        </div>
        <div>
          <dt>Query string</dt>
          <dd>{l.forwardQuery === true ? 'Forwarded' : l.forwardQuery === false ? 'Dropped' : 'Forwarded, utm_* replaced'}</dd>
        </div>
        <div>
          <dt>Tags</dt>
          <dd>
            <TagLinks tags={l.tags} />
          </dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>{fmtDateTime(l.createdAt)}</dd>
        </div>
      </dl>
      {canReadAnalytics && <LinkAnalyticsSection loc={loc} linkId={l.id} range={range} realtime />}
      <RulesSection linkId={l.id} campaignId={l.campaignId} />
      <QrCodesSection link={l} made={qrMade} />
      {/* Last: it loads with the analytics, and grows by a row per variant when they land; nothing below it moves then. */}
      {canReadAnalytics && <ExperimentsSection linkId={l.id} range={range} filters={filtersFrom(loc.query)} />}
      {mutations.dialog(() => navigate(href('links')))}
    </>
  );
}

const ruleName = (rule: Rule) => rule.name || rule.type;

function RulesSection({ linkId, campaignId }: { linkId: string; campaignId: string }) {
  const rules = useLoad(
    async (signal) => {
      const [own, campaign] = await Promise.all([
        unwrap(api.GET('/rules', { params: { query: { linkId, limit: 100 } }, signal })),
        unwrap(api.GET('/rules', { params: { query: { campaignId, limit: 100 } }, signal })),
      ]);
      return [...own.data, ...campaign.data.filter((r) => r.linkId === null)].sort(byEvaluationOrder);
    },
    [linkId, campaignId],
  );
  const [editing, setEditing] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<Rule | null>(null);
  const { error, run } = useAction(rules.reload);

  // The control that opened an editor, or moved a rule, is replaced or moved by the
  // answer (WCAG 2.4.3): focus goes back to it by selector once it is in the page,
  // and for a move, once the reordered list has loaded (moving a row drops focus).
  // An editor's opener, once the editor is closed: an effect of a render from before it
  // closed (Preact runs a component's pending effects before rendering it again) would
  // not find the opener yet and send focus to the heading.
  const section = useRef<HTMLElement>(null);
  const expectReplacing = useFocusAfterRemoval<{ selector: string; after: unknown; closing: boolean; fallback?: string | undefined }>(
    (target) => !(target.closing && editing !== null) && !(target.after !== undefined && (rules.data === target.after || rules.loading)),
    (target) => [section.current?.querySelector(target.selector), target.fallback ? section.current?.querySelector(target.fallback) : null, section.current?.querySelector('h2')],
  );
  const focusLater = (selector: string, afterLoad = false, closing = false, fallback?: string) => expectReplacing({ selector, after: afterLoad ? rules.data : undefined, closing, fallback });
  /** `changed`: saved, or refused as deleted or changed elsewhere: the list is read afresh (a rule deleted elsewhere goes, focus to the one in its place). */
  const closeEditor = (changed: boolean, opener: string, rule?: Rule) => {
    setEditing(null);
    const next = rule && inItsPlace(rules.data ?? [], rule.id);
    focusLater(opener, changed, true, next ? `tr[data-rule-id="${next.id}"] [data-edit]` : '[data-add-rule]');
    if (changed) rules.reload();
  };
  const canWrite = session.can('rules:write');
  const patchRule = (rule: Rule, body: { enabled?: boolean; priority?: number }) => unwrap(api.PATCH('/rules/{id}', { params: { path: { id: rule.id } }, body }));
  const patch = (rule: Rule, body: { enabled?: boolean; priority?: number }) => run(() => patchRule(rule, body));

  /**
   * Moves a rule one place in evaluation order: it and its neighbour swap, and every other
   * rule stays where it is. Its new priority may tie a rule beyond the neighbour, where
   * age decides, or leave no room (1 to 100, a run of tied rules): the rules to renumber
   * are the fewest that hold the new order, the moved rule first, a campaign-wide one
   * (it orders the campaign's other links too) last.
   */
  function move(index: number, direction: -1 | 1) {
    const list = rules.data!;
    const rule = list[index]!;
    const neighbour = list[index + direction];
    if (!neighbour) return;
    focusLater(`tr[data-rule-id="${rule.id}"] [data-move="${direction < 0 ? 'up' : 'down'}"]`, true);
    const order = [...list];
    order[index] = neighbour;
    order[index + direction] = rule;
    const changes = prioritiesFor(order, (r) => (r === rule ? 2 : r.linkId === null ? 1000 : 3));
    return run(async () => {
      if (!changes) throw new ApiFailure(0, 'NO_ROOM', `${ruleName(rule)} cannot move: priorities 1 to 100 cannot hold that order. Give some rules other priorities in their editors.`);
      await Promise.all([...changes].map(([r, priority]) => patchRule(r, { priority })));
    });
  }

  return (
    <section aria-labelledby="rules-title" class="rules" ref={section}>
      <div class="section-header">
        <h2 id="rules-title">Routing rules</h2>
        {canWrite && editing !== 'new' && (
          <button type="button" class="primary" data-add-rule onClick={() => setEditing('new')}>
            Add rule
          </button>
        )}
      </div>
      <p class="muted">The first enabled rule that matches a visitor decides; no match sends them to the default destination.</p>
      {error && <ErrorBox error={error} />}
      {rules.error && <ErrorBox error={rules.error} onRetry={rules.reload} />}
      {editing === 'new' && <RuleEditor linkId={linkId} campaignId={campaignId} onDone={(changed) => closeEditor(changed, '[data-add-rule]')} />}
      {rules.data && (
        <TableScroll label={'Rules in evaluation order'}>
          <table class="rules-table">
            <caption class="visually-hidden">Rules in evaluation order</caption>
            <thead>
              <tr>
                <th scope="col">Order</th>
                <th scope="col">Rule</th>
                <th scope="col">When</th>
                <th scope="col">Destination</th>
                <th scope="col" class="num">
                  Priority
                </th>
                <th scope="col">Status</th>
                {canWrite && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {rules.data.length === 0 && (
                <tr>
                  <td colSpan={7} class="muted">
                    No rules: every visitor goes to the default destination.
                  </td>
                </tr>
              )}
              {rules.data.map((rule, i) =>
                editing === rule.id ? (
                  <tr key={rule.id}>
                    <td colSpan={7}>
                      <RuleEditor rule={rule} linkId={linkId} campaignId={campaignId} onDone={(changed) => closeEditor(changed, `tr[data-rule-id="${rule.id}"] [data-edit]`, rule)} />
                    </td>
                  </tr>
                ) : (
                  <tr key={rule.id} data-rule-id={rule.id}>
                    <td>{i + 1}</td>
                    <td>
                      {ruleName(rule)}
                      {rule.linkId === null && <span class="badge">campaign-wide</span>}
                    </td>
                    <td>{describeConditions(rule)}</td>
                    <td class="truncate" title={rule.destinationUrl}>
                      {rule.destinationUrl}
                    </td>
                    <td class="num">{rule.priority}</td>
                    <td>{rule.enabled ? 'Enabled' : <span class="muted">Disabled</span>}</td>
                    {canWrite && (
                      <td class="row-actions">
                        {/* aria-disabled at the ends, not disabled: the button keeps focus when its rule reaches the top or bottom. */}
                        <button type="button" data-move="up" aria-disabled={i === 0 ? 'true' : undefined} onClick={() => move(i, -1)} aria-label={`Move ${ruleName(rule)} rule up`}>
                          ↑
                        </button>
                        <button type="button" data-move="down" aria-disabled={i === rules.data!.length - 1 ? 'true' : undefined} onClick={() => move(i, 1)} aria-label={`Move ${ruleName(rule)} rule down`}>
                          ↓
                        </button>
                        <button type="button" data-edit onClick={() => setEditing(rule.id)} aria-label={`Edit ${ruleName(rule)} rule`}>
                          Edit
                        </button>
                        <button type="button" onClick={() => patch(rule, { enabled: !rule.enabled })} aria-label={`${rule.enabled ? 'Disable' : 'Enable'} ${ruleName(rule)} rule`}>
                          {rule.enabled ? 'Disable' : 'Enable'}
                        </button>
                        <button type="button" class="danger" onClick={() => setDeleting(rule)} aria-label={`Delete ${ruleName(rule)} rule`}>
                          Delete
                        </button>
                      </td>
                    )}
                  </tr>
                ),
              )}
            </tbody>
          </table>
        </TableScroll>
      )}
      <Confirm
        open={deleting !== null}
        title="Delete this rule?"
        confirmLabel="Delete rule"
        onCancel={() => setDeleting(null)}
        onConfirm={() => {
          const rule = deleting!;
          setDeleting(null);
          // Its row goes, and the Delete button that had focus with it (WCAG 2.4.3): focus goes
          // to the Delete button of the rule in its place once the list has loaded, else Add rule.
          const next = inItsPlace(rules.data ?? [], rule.id);
          focusLater(next ? `tr[data-rule-id="${next.id}"] button.danger` : '[data-add-rule]', true);
          void run(async () => {
            await unwrap(api.DELETE('/rules/{id}', { params: { path: { id: rule.id } } }));
            announce(`Rule ${ruleName(rule)} deleted`);
          });
        }}
      >
        <p>
          <strong>{deleting && ruleName(deleting)}</strong> stops routing visitors at once{deleting?.linkId === null ? ' on every link of its campaign' : ''}. The clicks it decided stay in the analytics.
        </p>
      </Confirm>
    </section>
  );
}
