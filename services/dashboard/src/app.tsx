import { useEffect, useRef, useState } from 'preact/hooks';
import { api, rateLimitState, unwrap } from './api.ts';
import { ErrorBoundary } from './components/error-boundary.tsx';
import { ErrorBox } from './components/error-box.tsx';
import { StatusRegion } from './components/status-region.tsx';
import { useTitle } from './document-title.ts';
import { focusElement } from './focus.ts';
import { ApiFailure, type Me } from './api.ts';
import { href, navigate, onLinkClick, useLocation, type Location } from './router.ts';
import { session } from './session.ts';
import { carriedTo, rememberAnalytics, type AnalyticsView } from './filters.ts';
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
  // Its place is kept (hidden) until the first answer gives the figures: the line appearing
  // then moved the whole page down by a line where the header wraps (a phone): a layout
  // shift of 0.17 measured in chromium at 390x844 (dashboard-looks.int).
  if (!rate)
    return (
      <p class="rate" aria-hidden="true" style={{ visibility: 'hidden' }}>
        0,000 / 00,000 requests left
      </p>
    );
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

const nav: Array<{ path: string; label: string; scope: string; analytics?: AnalyticsView }> = [
  { path: '', label: 'Overview', scope: 'analytics:read', analytics: 'overview' },
  { path: 'links', label: 'Links', scope: 'links:read' },
  { path: 'clicks', label: 'Click log', scope: 'analytics:read', analytics: 'clicks' },
  { path: 'conversions', label: 'Conversions', scope: 'analytics:read', analytics: 'conversions' },
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
  // Signed in through the form (not restored on load): the shell then takes focus, which would otherwise fall to <body> as the form goes.
  const signedInHere = useRef(false);
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
  if (!me) {
    signedInHere.current = true;
    return <SignInView notice={notice} />;
  }

  return <Shell me={me} loc={loc} focusOnMount={signedInHere.current} />;
}

/** Why the last address was not shown: a section the key's scopes do not reach. */
interface Refusal {
  label: string;
  scope: string;
  /** The section shown instead; the note goes once the user moves on. */
  shownAt: string;
}

/** Closes the key's scopes popover on Escape, as a popover does, and gives focus back to its summary. */
function closeOnEscape(event: KeyboardEvent) {
  const details = event.currentTarget as HTMLDetailsElement;
  if (event.key !== 'Escape' || !details.open) return;
  details.open = false;
  details.querySelector('summary')?.focus();
}

function Shell({ me, loc, focusOnMount }: { me: Me; loc: Location; focusOnMount: boolean }) {
  const allowed = nav.filter((n) => session.can(n.scope));
  const [section = '', id, sub] = loc.path.split('/');
  // A link page opened without a query (from the links list, or a bookmark) shows its own
  // default period: it leaves what the last analytics view carried as it was.
  const linkPage = section === 'links' && id && id !== 'new' && !sub;
  if (section === '' || section === 'clicks' || section === 'conversions' || (linkPage && loc.query.size > 0)) rememberAnalytics(me.workspace.id, loc.query);
  const sectionHref = (n: (typeof nav)[number]) => href(n.path, n.analytics ? carriedTo(me.workspace.id, n.analytics) : undefined);
  // A section the key may not read (a key without analytics:read sees the link
  // pages only): its address, typed or bookmarked, lands on the first section the
  // key may read, with a note why, never on a page of 403 errors.
  const guard = nav.find((n) => n.path === section);
  const refused = guard !== undefined && !session.can(guard.scope);
  const home = allowed[0];
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  useEffect(() => {
    if (!refused || !guard || !home) return;
    setRefusal({ label: guard.label, scope: guard.scope, shownAt: home.path });
    navigate(href(home.path), { replace: true });
  }, [refused, section]);
  useEffect(() => {
    if (refusal && !refused && loc.path !== refusal.shownAt) setRefusal(null);
  }, [loc.path]);

  let view;
  // The views title the page themselves; these two pages are the shell's.
  let shellTitle: string | null = null;
  if (refused) {
    shellTitle = home ? null : 'No access';
    view = home ? null : <p>This API key may read none of the dashboard's pages. Sign out and sign in with a key that has the links:read or analytics:read scope.</p>;
  }
  else if (section === '') view = <OverviewView loc={loc} />;
  else if (section === 'links' && id === 'new') view = <LinkFormView loc={loc} linkId={null} />;
  else if (section === 'links' && id && sub === 'edit') view = <LinkFormView loc={loc} linkId={id} />;
  else if (section === 'links' && id) view = <LinkPageView loc={loc} linkId={id} />;
  else if (section === 'links') view = <LinksView loc={loc} />;
  else if (section === 'clicks') view = <ClicksView loc={loc} />;
  else if (section === 'conversions') view = <ConversionsView loc={loc} />;
  else if (section === 'campaigns') view = <CampaignsView loc={loc} />;
  else if (section === 'domains') view = <DomainsView />;
  else {
    shellTitle = 'Page not found';
    view = <p>There is no page here. <a href={href(home?.path ?? '')}>Go to {home?.label.toLowerCase() ?? 'the start'}</a>.</p>;
  }
  const note = refusal && !refused && refusal.shownAt === loc.path ? refusal : null;
  useTitle(shellTitle);

  // A new page, reached without a page load: focus goes to its main region, so a
  // screen reader announces where the user is and Tab starts there (WCAG 2.4.3,
  // 4.1.3). Not on the first load (the browser starts at the top), nor when only
  // the query changes (a filter): the user stays at the control they used.
  const shownPath = useRef<string | null>(focusOnMount ? null : loc.path);
  useEffect(() => {
    if (shownPath.current === loc.path) return;
    shownPath.current = loc.path;
    focusElement(document.getElementById('main'));
  }, [loc.path]);

  return (
    <div class="shell" onClick={onLinkClick}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <a class="brand" href={home ? sectionHref(home) : href('')}>
          linkroute
        </a>
        <nav aria-label="Sections">
          <ul>
            {allowed.map((n) => (
              <li key={n.path}>
                <a href={sectionHref(n)} aria-current={section === n.path ? 'page' : undefined}>
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
          <details class="scopes" onKeyDown={closeOnEscape}>
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
        {note && (
          <p class="notice" role="status" data-refused={note.scope}>
            This API key cannot open {note.label}: it lacks the <code>{note.scope}</code> scope. Here is {nav.find((n) => n.path === note.shownAt)?.label ?? 'what it may read'} instead.
          </p>
        )}
        <ErrorBoundary resetKey={`${loc.path}?${loc.query.toString()}`}>{view}</ErrorBoundary>
      </main>
      <StatusRegion />
    </div>
  );
}
