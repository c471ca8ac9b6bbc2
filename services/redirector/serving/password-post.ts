/**
 * `POST /{shortCode}` with `password=...` (application/x-www-form-urlencoded; and the
 * visitor's referrer host, `referrer=...`, as the form carries it from their GET), the one
 * asynchronous request path: scrypt runs in libuv's threadpool. uWS rules followed here:
 * every input is captured before the handler returns, onAborted is registered before
 * any asynchronous step, and every later write happens inside res.cork() and only when
 * the request was not aborted.
 *
 * A link GET would not serve (disabled, no rule matched, expired, at its clicks limit)
 * answers as GET does, before the password is looked at: decide() runs first.
 *
 * Throttling (before any scrypt work): the wrong-password limits per visitor, client
 * address and link (password-limits.ts), shared by every redirector when there is a bus
 * (password-failure-share.ts: a failure here is charged there, one there is charged
 * here). At most PASSWORD_CHECKS_IN_FLIGHT checks run at once; a post beyond them is a
 * 503 with Retry-After, charged nothing.
 */
import type { HttpRequest, HttpResponse } from 'uWebSockets.js';
import { verifyPassword } from '../../../shared/auth/password-hash.ts';
import { errorFields } from '../../../shared/logger.ts';
import type { RoutableLink } from '../../../shared/routing/index.ts';
import { visitorCookie } from '../../../shared/visitor.ts';
import type { RedirectorContext } from '../context.ts';
import { passwordHashOf } from './link-password.ts';
import {
  internalErrorPage,
  methodNotAllowedPage,
  notFoundPage,
  passwordPage,
  payloadTooLargePage,
  REFERRER_FIELD,
  tooManyAttemptsPage,
  unavailablePage,
  unsupportedMediaPage,
  type Page,
} from '../pages/html-pages.ts';
import { PasswordLimits } from './password-limits.ts';
import { captureRequest, carriedReferrerHost, type RequestInfo } from './request-facts.ts';
import { sendInternalError, sendPage } from '../pages/responses.ts';
import type { LinkServer } from './serve-link.ts';

export const MAX_PASSWORD_BODY_BYTES = 4096;
const FORM_TYPE = 'application/x-www-form-urlencoded';

interface PendingPost {
  aborted: boolean;
  /** A response was written (or the request aborted): nothing may be written again. */
  done: boolean;
  size: number;
  chunks: Buffer[];
}

export function createPasswordPostHandler(ctx: RedirectorContext, server: LinkServer): (res: HttpResponse, req: HttpRequest) => void {
  const { lookup, secret, logger, counters, passwordFailures } = ctx;
  const clock = ctx.now;
  const limits = new PasswordLimits(ctx.config.PASSWORD_ATTEMPTS_PER_MINUTE, secret);
  // Another redirector's failure counts here from when it arrives: no clock of theirs is read.
  passwordFailures?.listen((keys) => limits.charge(keys, clock()));
  let checksInFlight = 0;
  let missingHashLogged = false;

  /** Writes a page later (outside the handler): corked, once, never after an abort. */
  function answerLater(res: HttpResponse, pending: PendingPost, page: Page, setCookie: string | null = null, extra: readonly [string, string] | null = null, close = false): void {
    if (pending.aborted || pending.done) return;
    pending.done = true;
    res.cork(() => sendPage(res, page, false, setCookie, extra, close));
  }

  async function check(res: HttpResponse, pending: PendingPost, info: RequestInfo, link: RoutableLink, contentType: string): Promise<void> {
    if (!contentType.toLowerCase().startsWith(FORM_TYPE)) {
      counters.passwordRejected++;
      answerLater(res, pending, unsupportedMediaPage);
      return;
    }
    const form = new URLSearchParams(Buffer.concat(pending.chunks).toString('utf8'));
    const password = form.get('password') ?? '';
    // The visitor's referrer host, carried by the form from their GET (this POST's Referer
    // is the form page itself): recorded on the click, and carried on by a wrong answer's form.
    const referrer = carriedReferrerHost(form.get(REFERRER_FIELD) ?? '');
    const linkId = link.compiled.id;
    const now = clock();
    const visitor = server.visitorOf(info, now);
    const cookie = visitor.isNew ? visitorCookie(visitor.id) : null;
    const keys = limits.keysOf(visitor.id, info.ip, linkId);
    const retryAfter = limits.retryAfter(keys, now);
    if (retryAfter > 0) {
      counters.passwordRejected++;
      answerLater(res, pending, tooManyAttemptsPage, cookie, ['Retry-After', String(retryAfter)]);
      return;
    }
    const hash = passwordHashOf(link.compiled);
    if (hash === null) {
      if (!missingHashLogged) logger.error('password-protected link without a password hash in the snapshot', { linkId });
      missingHashLogged = true;
      counters.error++;
      answerLater(res, pending, unavailablePage);
      return;
    }
    if (checksInFlight >= ctx.config.PASSWORD_CHECKS_IN_FLIGHT) {
      counters.passwordRejected++;
      answerLater(res, pending, unavailablePage, cookie, ['Retry-After', '1']);
      return;
    }
    // Charged before hashing so concurrent guesses cannot all pass the check above.
    limits.charge(keys, now);
    checksInFlight++;
    let right: boolean;
    try {
      right = password !== '' && (await verifyPassword(password, hash));
    } finally {
      checksInFlight--;
    }
    if (!right) {
      counters.passwordRejected++;
      // Only failures are shared: a right guess was never charged anywhere else.
      passwordFailures?.publish(keys);
      answerLater(res, pending, passwordPage(true, referrer), cookie);
      return;
    }
    limits.refund(keys, now);
    if (pending.aborted || pending.done) return;
    // The snapshot may have changed during scrypt: serve what it holds now, if it is still this link.
    const current = lookup.find(info.host, info.code);
    pending.done = true;
    res.cork(() => {
      try {
        if (current === undefined || current.compiled.id !== linkId) {
          counters.notFound++;
          sendPage(res, notFoundPage, false);
        } else server.serve(res, info, current, false, { referrerHost: referrer });
      } catch (err) {
        // Marked done above, so the check's own failure path would write nothing: answer here.
        counters.error++;
        logger.error('password post answer failed', { linkId, ...errorFields(err) });
        sendInternalError(res, false);
      }
    });
  }

  return function onPasswordPost(res: HttpResponse, req: HttpRequest): void {
    const info = captureRequest(res, req, ctx.config);
    const contentType = req.getHeader('content-type');
    const declaredLength = Number(req.getHeader('content-length') || '0');
    const link = lookup.find(info.host, info.code);
    // Answers given right away leave the unread body to uWS; closing keeps the
    // connection from being reused with a half-read body.
    if (link === undefined) {
      counters.notFound++;
      sendPage(res, notFoundPage, false, null, null, true);
      return;
    }
    // A link GET would not serve answers what GET does, before its password is read or
    // throttled: otherwise a 405 would tell a disabled link from no link, and the check
    // (403 on a wrong guess) would confirm passwords of links GET hides.
    if (server.answerIfUnavailable(res, info, link, true)) return;
    if (!link.compiled.hasPassword) {
      counters.passwordRejected++;
      sendPage(res, methodNotAllowedPage, false, null, ['Allow', 'GET, HEAD'], true);
      return;
    }
    if (declaredLength > MAX_PASSWORD_BODY_BYTES) {
      counters.passwordRejected++;
      sendPage(res, payloadTooLargePage, false, null, null, true);
      return;
    }
    const pending: PendingPost = { aborted: false, done: false, size: 0, chunks: [] };
    res.onAborted(() => {
      pending.aborted = true;
    });
    res.onData((chunk, isLast) => {
      if (pending.done) return;
      pending.size += chunk.byteLength;
      if (pending.size > MAX_PASSWORD_BODY_BYTES) {
        counters.passwordRejected++;
        answerLater(res, pending, payloadTooLargePage, null, null, true);
        return;
      }
      // The ArrayBuffer is only valid during this callback: copy it.
      pending.chunks.push(Buffer.from(chunk.slice(0)));
      if (!isLast) return;
      check(res, pending, info, link, contentType).catch((err: unknown) => {
        logger.error('password check failed', { linkId: link.compiled.id, ...errorFields(err) });
        counters.error++;
        answerLater(res, pending, internalErrorPage);
      });
    });
  };
}
