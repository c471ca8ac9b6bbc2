import { useMemo } from 'preact/hooks';
import { api, unwrap } from '../api.ts';
import { countryName, deletedLinkName, fmtInt, fmtTime, shortLinkName } from '../format.ts';
import { ErrorBox, explain } from './error-box.tsx';
import { PollPaused } from './poll-paused.tsx';
import { useLoad } from '../use-load.ts';
import { usePoll } from '../use-poll.ts';

const POLL_MS = 15_000;

/** The last 60 minutes, per minute, polled while the tab is visible and the quota allows (usePoll). */
export function RealtimeStrip({ scope, timeZone }: { scope: Record<string, string | undefined>; timeZone?: string }) {
  const key = JSON.stringify(scope);
  const rt = useLoad((signal) => unwrap(api.GET('/analytics/realtime', { params: { query: scope }, signal })), [key]);
  const paused = usePoll(rt.reload, POLL_MS, { busy: rt.loading });
  // A failed poll keeps the last figures on screen: the reader must learn how old they are.
  const updatedAt = useMemo(() => new Date(), [rt.data]);
  const data = rt.data?.data;
  if (rt.error && !data) return <ErrorBox error={rt.error} onRetry={rt.reload} />;
  if (!data) return <RealtimePending />;
  const live = !rt.error && !paused;
  const max = Math.max(1, ...data.minutes.map((m) => m.clicks));
  const lastFive = data.minutes.slice(-5).reduce((n, m) => n + m.clicks, 0);
  return (
    <section class="realtime card" aria-labelledby="realtime-title" data-live={live ? 'true' : 'false'}>
      <h2 id="realtime-title">
        Last 60 minutes <span class={live ? 'live-dot' : 'live-dot off'} aria-hidden="true" />
      </h2>
      {rt.error && (
        <p class="realtime-stale" role="status" data-realtime-stale>
          <strong>
            Not updated since <time dateTime={updatedAt.toISOString()}>{fmtTime(updatedAt)}</time>
            {paused ? '.' : ' — retrying.'}
          </strong>{' '}
          {explain(rt.error)}
        </p>
      )}
      {paused && <PollPaused rate={paused} onRefresh={rt.reload} />}
      <p class="realtime-figures">
        <strong data-realtime-clicks>{fmtInt(data.summary.clicks)}</strong> clicks · <strong data-realtime-visitors>{fmtInt(data.summary.uniqueVisitors)}</strong> visitors · <span data-realtime-last5>{fmtInt(lastFive)}</span> in the last 5 minutes
      </p>
      <div class="sparkbars" aria-hidden="true">
        {data.minutes.map((m) => (
          <span key={m.minute} style={{ height: `${Math.max(2, (m.clicks / max) * 100)}%` }} title={`${fmtTime(m.minute, timeZone)}: ${m.clicks}`} />
        ))}
      </div>
      <TopLines
        links={data.topLinks.length > 0 ? `Top links: ${data.topLinks.map((l) => `${topLinkName(l)} (${fmtInt(l.clicks)})`).join(', ')}.` : ''}
        countries={data.topCountries.length > 0 ? `Countries: ${data.topCountries.map((c) => `${countryName(c.country || null)} (${fmtInt(c.clicks)})`).join(', ')}.` : ''}
      />
    </section>
  );
}

/**
 * The strip's box before its first answer, as tall as it will be with its figures, so
 * what is below does not move when they come. Not `.realtime`: that is the strip with figures.
 */
export function RealtimePending() {
  return (
    <section class="realtime-pending card" aria-labelledby="realtime-title" aria-busy="true">
      <h2 id="realtime-title">Last 60 minutes</h2>
      {/* The words of the figures line, which wraps on a phone, with "…" for the figures: as many lines as it will have. */}
      <p class="realtime-figures muted">
        <span class="visually-hidden">Loading: </span>… clicks · … visitors · … in the last 5 minutes
      </p>
      <div class="sparkbars" aria-hidden="true" />
      <TopLines links="" countries="" />
    </section>
  );
}

/**
 * The top links and the top countries, a line each, cut with an ellipsis where the
 * screen is narrower (the whole line is its title, and screen readers read it all):
 * the strip is as tall with any answer as before its first, so what is below it
 * stays where it is when the figures land and at every poll, on a phone too.
 */
function TopLines({ links, countries }: { links: string; countries: string }) {
  return (
    <div class="muted realtime-top">
      {[links, countries].map((line, i) => (
        <p key={i} title={line || undefined} aria-hidden={line ? undefined : 'true'}>
          {line || '\u00a0'}
        </p>
      ))}
    </div>
  );
}

/**
 * `/code`, `host/code` on a custom domain (codes are unique per domain); a deleted link's
 * code says so (the code may name a newer link now); an id of no link of the workspace
 * (no code) shows as the id.
 */
function topLinkName(link: { linkId: string; shortCode: string; domain?: string | undefined; deleted?: boolean | undefined }): string {
  if (!link.shortCode) return link.linkId;
  const name = shortLinkName(link.shortCode, link.domain);
  return link.deleted ? deletedLinkName(name) : name;
}
