/**
 * The request path of a resolved short code: facts -> decide() -> answer -> click event.
 * Synchronous from start to end (no await, no I/O): it runs inside a uWS handler or a
 * res.cork() callback. Nothing of a request outlives it but its event.
 *
 * What counts (DESIGN "Counting"): GET answers that send the visitor on (redirect,
 * deep-link page or intent, 204 for `never`) record a click; 404/410 answers, password
 * forms and HEAD never do. Bots are recorded with `bot: true`.
 */
import type { HttpResponse } from 'uWebSockets.js';
import { ClickIdIssuer } from '../../../shared/click-id.ts';
import type { Place } from '../../../shared/request-facts/geo-ip.ts';
import type { UserAgentFacts } from '../../../shared/request-facts/user-agent.ts';
import { decide, visitorBucket, type CompiledLink, type GoneDecision, type NotFoundDecision, type RequestFacts, type RoutableLink } from '../../../shared/routing/index.ts';
import type { ClickEvent } from '../../../shared/schemas/click-event.ts';
import { VisitorHasher, visitorCookie, visitorFromCookieHeader } from '../../../shared/visitor.ts';
import type { RedirectorContext } from '../context.ts';
import { appendClickId, CLICK_ID_PARAM, forwardQuery, headerSafeUrl, isHttpUrl, isSafeAppUrl } from './destination-url.ts';
import { clicksLimitPage, deepLinkPage, expiredPage, internalErrorPage, notFoundPage, passwordPage } from '../pages/html-pages.ts';
import { parseTracking, placeOf, referrerHost, type RequestInfo } from './request-facts.ts';
import { sendNoContent, sendPage, sendRedirect, type SetCookies } from '../pages/responses.ts';
import { hasPasswordPass, passwordPassCookie } from './password-pass.ts';
import { UserAgentWorkCache } from './user-agent-work.ts';
import { landingUtm } from './landing-utm.ts';

/** The visitor just gave a protected link's right password (its form's POST). */
export interface PasswordVerified {
  /**
   * The referrer host the visitor came to the form with, as the form carried it (null:
   * none): the click records it, as the POST's own Referer is the form page.
   */
  referrerHost: string | null;
}

export interface LinkServer {
  /**
   * Answers a request for `link`. `passwordVerified`: the visitor just gave the right
   * password (POST; the answer sets a pass remembering it, password-pass.ts); otherwise
   * (null) a protected link answers its form unless the request holds a valid pass.
   */
  serve(res: HttpResponse, info: RequestInfo, link: RoutableLink, head: boolean, passwordVerified: PasswordVerified | null): void;
  /**
   * When decide() finds `link` not available to this request (disabled, no rule matched,
   * expired, at its clicks limit), answers exactly what serve() would (404, 410 or the
   * expiredUrl redirect) and returns true; otherwise writes nothing and returns false.
   * The password POST asks first: where GET shows no form, a posted password must be
   * neither checked nor able to tell a hidden link from no link. `closeConnection`: the
   * request's body is left unread.
   */
  answerIfUnavailable(res: HttpResponse, info: RequestInfo, link: RoutableLink, closeConnection: boolean): boolean;
  /** GIF already sent by the caller; records the impression of an enabled link. */
  recordImpression(info: RequestInfo, link: RoutableLink): void;
  /** The visitor id of a request (cookie, else hash) and whether it is new (no cookie). */
  visitorOf(info: RequestInfo, now: number): Visitor;
}

export interface Visitor {
  id: string;
  /** No cookie of ours came with the request: the answer sets one. */
  isNew: boolean;
}

/** Rule types whose predicates never read facts.bucket (see shared/routing/matchers). */
const BUCKET_FREE_RULE_TYPES: ReadonlySet<string> = new Set(['geo', 'device', 'time']);

/**
 * Whether decide() may read the visitor bucket for this link: it has a rule of a type that
 * can (percentage, or a type newer than this list). Most links have no rules at all, and
 * the bucket hash is otherwise computed for nothing on every request.
 */
const readsBucket = new WeakMap<RoutableLink, boolean>();

function needsBucket(link: RoutableLink): boolean {
  if (link.rules.length === 0) return false;
  let needs = readsBucket.get(link);
  if (needs === undefined) {
    needs = link.compiled.rules.some((rule) => !BUCKET_FREE_RULE_TYPES.has(rule.type));
    readsBucket.set(link, needs);
  }
  return needs;
}

/** Where a click's visitor came from: the request's Referer, or the one their password form carried. */
function clickReferrer(info: RequestInfo, passwordVerified: PasswordVerified | null): string | null {
  return passwordVerified === null ? referrerHost(info.referer) : passwordVerified.referrerHost;
}

export function createLinkServer(ctx: RedirectorContext): LinkServer {
  const { lookup, sink, secret, logger, counters, geo } = ctx;
  const clock = ctx.now;
  const qrParam = ctx.config.QR_MARKER_PARAM;
  /** Visitor parameters never forwarded: our QR marker, and clickId where the link appends its own. */
  const notForwarded = [qrParam];
  const notForwardedWhenTracking = [qrParam, CLICK_ID_PARAM];
  /** Parsed UA and its digest for the visitor hash, per UA string: the redirector's one User-Agent cache. */
  const userAgents = new UserAgentWorkCache();
  const clickIds = new ClickIdIssuer(secret);
  const visitors = new VisitorHasher(secret);

  function visitorOf(info: RequestInfo, now: number, uaDigest = userAgents.get(info.userAgent).digest): Visitor {
    const fromCookie = info.cookie === '' ? null : visitorFromCookieHeader(info.cookie);
    return fromCookie === null ? { id: visitors.hash(info.ip, uaDigest, now), isNew: true } : { id: fromCookie, isNew: false };
  }

  function emit(
    kind: ClickEvent['kind'],
    id: string,
    now: number,
    link: CompiledLink,
    info: RequestInfo,
    referrer: string | null,
    visitorId: string,
    ua: UserAgentFacts,
    place: Place,
    ruleId: string | null,
    destination: string | null,
  ): void {
    const tracking = landingUtm(parseTracking(info.query, qrParam), destination, link.forwardQuery);
    sink.emit({
      id,
      kind,
      ts: now,
      workspaceId: link.workspaceId,
      linkId: link.id,
      campaignId: link.campaignId,
      visitorId,
      country: place.country,
      region: place.region,
      city: place.city,
      deviceClass: ua.deviceClass,
      os: ua.os,
      browser: ua.browser,
      referrerHost: referrer,
      utmSource: tracking.utmSource,
      utmMedium: tracking.utmMedium,
      utmCampaign: tracking.utmCampaign,
      utmTerm: tracking.utmTerm,
      utmContent: tracking.utmContent,
      source: tracking.qr ? 'qr' : 'link',
      ruleId,
      destination,
      bot: ua.isBot,
    });
  }

  /**
   * A web destination as the visitor gets it: their query forwarded, then our click id.
   * (App URLs and intents are built at compile time and get neither.)
   */
  function onward(url: string, query: string, link: CompiledLink, clickId: string): string {
    const tracking = link.conversionTracking;
    const forwarded = forwardQuery(url, query, link.forwardQuery, tracking ? notForwardedWhenTracking : notForwarded);
    // A HEAD (clickId '') gets none, but the destination's own clickId goes all the same.
    return tracking ? appendClickId(forwarded, clickId) : forwarded;
  }

  function fail(res: HttpResponse, head: boolean, message: string, link: CompiledLink): void {
    counters.error++;
    logger.error(message, { linkId: link.id });
    sendPage(res, internalErrorPage, head);
  }

  function factsOf(link: RoutableLink, now: number, ua: UserAgentFacts, place: Place, visitorId: string): RequestFacts {
    return {
      now,
      country: place.country,
      deviceClass: ua.deviceClass,
      os: ua.os,
      // Facts decide() cannot read for this link are not worth computing (0 is never read).
      bucket: needsBucket(link) ? visitorBucket(visitorId, link.compiled.id) : 0,
      clicks: link.clicksLimit === null ? 0 : lookup.clicks(link.compiled.id),
    };
  }

  function sendUnavailable(res: HttpResponse, decision: NotFoundDecision | GoneDecision, head: boolean, closeConnection: boolean): void {
    if (decision.kind === 'not_found') {
      // Same page as an unknown code: a disabled link is not revealed as existing.
      counters.notFound++;
      sendPage(res, notFoundPage, head, null, null, closeConnection);
      return;
    }
    const expiredUrl = decision.expiredUrl === null ? null : headerSafeUrl(decision.expiredUrl);
    if (expiredUrl !== null) {
      counters.expiredRedirect++;
      sendRedirect(res, expiredUrl, null, closeConnection);
    } else {
      counters.gone++;
      sendPage(res, decision.reason === 'expired' ? expiredPage : clicksLimitPage, head, null, null, closeConnection);
    }
  }

  function answerIfUnavailable(res: HttpResponse, info: RequestInfo, link: RoutableLink, closeConnection: boolean): boolean {
    const now = clock();
    const uaWork = userAgents.get(info.userAgent);
    const place = placeOf(info, geo);
    const visitor = visitorOf(info, now, uaWork.digest);
    const decision = decide(link, factsOf(link, now, uaWork.facts, place, visitor.id));
    if (decision.kind !== 'not_found' && decision.kind !== 'gone') return false;
    sendUnavailable(res, decision, false, closeConnection);
    return true;
  }

  function serve(res: HttpResponse, info: RequestInfo, link: RoutableLink, head: boolean, passwordVerified: PasswordVerified | null): void {
    const compiled = link.compiled;
    const now = clock();
    const uaWork = userAgents.get(info.userAgent);
    const ua = uaWork.facts;
    const place = placeOf(info, geo);
    const visitor = visitorOf(info, now, uaWork.digest);
    const decision = decide(link, factsOf(link, now, ua, place, visitor.id));
    if (decision.kind === 'not_found' || decision.kind === 'gone') {
      sendUnavailable(res, decision, head, false);
      return;
    }

    let cookie: SetCookies = visitor.isNew ? visitorCookie(visitor.id) : null;
    if (compiled.hasPassword) {
      if (passwordVerified !== null) {
        const pass = passwordPassCookie(secret, compiled, info.code, now);
        cookie = cookie === null ? pass : [cookie, pass];
      } else if (!hasPasswordPass(info.cookie, secret, compiled, now)) {
        counters.passwordForm++;
        // The form's POST has the form page as its Referer: the form carries this one's host.
        sendPage(res, passwordPage(false, referrerHost(info.referer)), head, cookie);
        return;
      }
    }
    const record = !head;
    // The click id is the event id: only a recorded click gets one. HEAD's Location has
    // none (RFC 9110 lets HEAD leave out what only generating the answer decides): an id
    // shown to a link preview would let a conversion count for a click never recorded.
    const clickId = record ? clickIds.issue(compiled.id, now) : '';

    if (decision.kind === 'no_content') {
      counters.noContent++;
      sendNoContent(res, cookie);
      if (record) emit('click', clickId, now, compiled, info, clickReferrer(info, passwordVerified), visitor.id, ua, place, decision.ruleId, null);
      return;
    }

    const destination = onward(decision.destination, info.query, compiled, clickId);
    // Crawlers and link-preview fetchers read the web page, never the app: an intent URL or
    // the app-opening page would break previews and indexing (Branch and Bitly do the same).
    const deepLink = ua.isBot ? null : decision.deepLink;
    if (deepLink !== null && deepLink.platform === 'ios' && isSafeAppUrl(deepLink.appUrl)) {
      const fallback = isHttpUrl(deepLink.fallbackUrl) ? onward(deepLink.fallbackUrl, info.query, compiled, clickId) : destination;
      counters.deepLink++;
      sendPage(res, deepLinkPage(deepLink.appUrl, fallback), head, cookie);
    } else {
      const intent = deepLink !== null && deepLink.platform === 'android';
      const location = headerSafeUrl(intent ? deepLink.intentUrl : destination);
      if (location === null) {
        fail(res, head, 'redirect target is not a usable URL', compiled);
        return;
      }
      if (intent) counters.deepLink++;
      else counters.redirect++;
      sendRedirect(res, location, cookie);
    }
    if (record) emit('click', clickId, now, compiled, info, clickReferrer(info, passwordVerified), visitor.id, ua, place, decision.ruleId, decision.destination);
  }

  function recordImpression(info: RequestInfo, link: RoutableLink): void {
    const compiled = link.compiled;
    const now = clock();
    const uaWork = userAgents.get(info.userAgent);
    const visitor = visitorOf(info, now, uaWork.digest);
    emit('impression', clickIds.issue(compiled.id, now), now, compiled, info, referrerHost(info.referer), visitor.id, uaWork.facts, placeOf(info, geo), null, null);
  }

  return { serve, answerIfUnavailable, recordImpression, visitorOf };
}
