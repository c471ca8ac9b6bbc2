import { useEffect, useState } from 'preact/hooks';
import { api, rateLimitState, unwrap } from './api.ts';
import { ErrorBox } from './components/error-box.tsx';
import { ApiFailure } from './api.ts';
import { href, navigate, onLinkClick, useLocation } from './router.ts';
import { session } from './session.ts';
import { CampaignsView } from './views/campaigns.tsx';
import { ClicksView } from './views/clicks.tsx';
import { ConversionsView } from './views/conversions.tsx';
import { DomainsView } from './views/domains.tsx';
import { LinkFormView } from './views/link-form.tsx';
import { LinkPageView } from './views/link-page.tsx';
import { LinksView } from './views/links.tsx';
import { OverviewView } from './views/overview.tsx';
import { SignInView } from './views/sign-in.tsx';

function useSession() {
  const [state, setState] = useState(session.state());
  useEffect(() => session.subscribe(() => setState(session.state())), []);
  return state;
}

function RateLimitNote() {
  const [rate, setRate] = useState(rateLimitState.get());
  useEffect(() => rateLimitState.subscribe(() => setRate(rateLimitState.get())), []);
  if (!rate) return null;
  const low = rate.remaining < Math.max(5, rate.limit * 0.05);
  return (
    <p class={`rate ${low ? 'low' : ''}`} title="API requests left in this workspace's rolling hour" data-rate-remaining={rate.remaining}>
      {rate.remaining.toLocaleString()} / {rate.limit.toLocaleString()} requests left
      {low && (
        <>
          {' · resets '}
          <time dateTime={new Date(rate.reset * 1000).toISOString()}>{new Date(rate.reset * 1000).toLocaleTimeString()}</time>
        </>
      )}
    </p>
  );
}

const nav = [
  { path: '', label: 'Overview', scope: 'analytics:read' },
  { path: 'links', label: 'Links', scope: 'links:read' },
  { path: 'clicks', label: 'Click log', scope: 'analytics:read' },
  { path: 'conversions', label: 'Conversions', scope: 'analytics:read' },
  { path: 'campaigns', label: 'Campaigns', scope: 'links:read' },
  { path: 'domains', label: 'Domains', scope: 'links:read' },
];

export function App() {
  const { me, notice } = useSession();
  const loc = useLocation();
  // A key kept in this tab from before a reload: the view paints from the identity
  // kept beside it, while the API is asked again (scopes may have changed; a revoked
  // key answers 401 and signs out). Without a kept identity, wait for the answer.
  const [restoreError, setRestoreError] = useState<ApiFailure | undefined>();
  const [checked, setChecked] = useState(false);
  useEffect(() => {
    if (checked || session.key() === null) return;
    unwrap(api.GET('/me')).then(
      (body) => {
        session.restore(body.data);
        setChecked(true);
      },
      (err: unknown) => {
        if (err instanceof ApiFailure && err.status !== 401) setRestoreError(err);
        setChecked(true);
      },
    );
  }, [checked]);

  if (restoreError && !me) return <main id="main" class="sign-in"><ErrorBox error={restoreError} onRetry={() => (setRestoreError(undefined), setChecked(false))} /></main>;
  if (!me && session.key() !== null && !checked) return <p class="loading">Signing in…</p>;
  if (!me) return <SignInView notice={notice} />;

  const allowed = nav.filter((n) => session.can(n.scope));
  const [section = '', id, sub] = loc.path.split('/');
  // A key without analytics:read sees the link pages only.
  if (section === '' && !session.can('analytics:read')) {
    navigate(href('links'), { replace: true });
    return null;
  }

  let view;
  if (section === '') view = <OverviewView loc={loc} />;
  else if (section === 'links' && id === 'new') view = <LinkFormView loc={loc} linkId={null} />;
  else if (section === 'links' && id && sub === 'edit') view = <LinkFormView loc={loc} linkId={id} />;
  else if (section === 'links' && id) view = <LinkPageView loc={loc} linkId={id} />;
  else if (section === 'links') view = <LinksView loc={loc} />;
  else if (section === 'clicks') view = <ClicksView loc={loc} />;
  else if (section === 'conversions') view = <ConversionsView loc={loc} />;
  else if (section === 'campaigns') view = <CampaignsView loc={loc} />;
  else if (section === 'domains') view = <DomainsView />;
  else view = <p>There is no page here. <a href={href('')}>Go to the overview</a>.</p>;

  return (
    <div class="shell" onClick={onLinkClick}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <a class="brand" href={href(session.can('analytics:read') ? '' : 'links')}>
          linkroute
        </a>
        <nav aria-label="Sections">
          <ul>
            {allowed.map((n) => (
              <li key={n.path}>
                <a href={href(n.path)} aria-current={section === n.path ? 'page' : undefined}>
                  {n.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <p>
            <strong data-workspace>{me.workspace.name}</strong> <span class="muted">({me.workspace.plan})</span>
          </p>
          <details class="scopes">
            <summary>Key {me.key.prefix}…</summary>
            <div class="popover">
              <p>Scopes of this key:</p>
              <ul data-scopes>
                {me.key.scopes.map((s) => (
                  <li key={s}>
                    <code>{s}</code>
                  </li>
                ))}
              </ul>
            </div>
          </details>
          <RateLimitNote />
          <button type="button" onClick={() => session.signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {view}
      </main>
    </div>
  );
}
