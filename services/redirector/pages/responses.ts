/**
 * Writing answers with uWS. Callers are inside a request handler (uWS corks those) or
 * inside res.cork(); every function ends the response exactly once.
 *
 * HEAD: uWS's end(body) would send the body, so a HEAD with a body reports its length
 * with an explicit Content-Length and ends without one (same headers as the GET).
 */
import type { HttpResponse } from 'uWebSockets.js';
import { internalErrorPage, type Page } from './html-pages.ts';

/** Every redirect must reach us again (DESIGN: "Cache-Control: no-store so every click reaches us"). */
export const NO_STORE = 'private, no-store, max-age=0';
/**
 * On a redirect this can only keep or further trim what the originating page's own
 * policy already allowed (Fetch applies a redirect's policy to the already-computed
 * referrer); it drops the referrer on an https -> http downgrade.
 */
export const REFERRER_POLICY = 'no-referrer-when-downgrade';

const HTML = 'text/html; charset=utf-8';

/** Set-Cookie lines of an answer: usually none or one (the visitor cookie), two after a right password. */
export type SetCookies = string | readonly string[] | null;

function writeCookies(res: HttpResponse, cookies: SetCookies): void {
  if (cookies === null) return;
  if (typeof cookies === 'string') res.writeHeader('Set-Cookie', cookies);
  else for (const cookie of cookies) res.writeHeader('Set-Cookie', cookie);
}

/** 1x1 transparent GIF89a. */
export const TRANSPARENT_GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

function endWith(res: HttpResponse, body: Buffer | string, head: boolean): void {
  if (head) res.writeHeader('Content-Length', String(Buffer.byteLength(body))).endWithoutBody();
  else res.end(body);
}

export function sendPage(
  res: HttpResponse,
  page: Page,
  head: boolean,
  setCookie: SetCookies = null,
  extraHeader: readonly [string, string] | null = null,
  closeConnection = false,
): void {
  res
    .writeStatus(page.status)
    .writeHeader('Content-Type', HTML)
    .writeHeader('Cache-Control', NO_STORE)
    .writeHeader('X-Content-Type-Options', 'nosniff')
    .writeHeader('X-Frame-Options', 'DENY')
    .writeHeader('Referrer-Policy', REFERRER_POLICY)
    .writeHeader('Content-Security-Policy', page.csp);
  writeCookies(res, setCookie);
  if (extraHeader !== null) res.writeHeader(extraHeader[0], extraHeader[1]);
  if (closeConnection && !head) res.end(page.body, true);
  else endWith(res, page.body, head);
}

export function sendGif(res: HttpResponse, head: boolean): void {
  res
    .writeStatus('200 OK')
    .writeHeader('Content-Type', 'image/gif')
    .writeHeader('Cache-Control', NO_STORE)
    .writeHeader('X-Content-Type-Options', 'nosniff');
  endWith(res, TRANSPARENT_GIF, head);
}

export function sendJson(res: HttpResponse, status: string, json: string, head: boolean): void {
  res.writeStatus(status).writeHeader('Content-Type', 'application/json').writeHeader('Cache-Control', 'no-store');
  endWith(res, json, head);
}

/**
 * 302 to `location` (already header-safe). Empty body: GET and HEAD are the same.
 * `closeConnection` for a request whose body is left unread (a POST answered at once).
 */
export function sendRedirect(res: HttpResponse, location: string, setCookie: SetCookies, closeConnection = false): void {
  res.writeStatus('302 Found').writeHeader('Location', location).writeHeader('Cache-Control', NO_STORE).writeHeader('Referrer-Policy', REFERRER_POLICY);
  writeCookies(res, setCookie);
  if (closeConnection) res.end('', true);
  else res.end();
}

/** 204 for redirectBehavior `never`. No Content-Length: a 204 must not carry one. */
export function sendNoContent(res: HttpResponse, setCookie: SetCookies): void {
  res.writeStatus('204 No Content').writeHeader('Cache-Control', NO_STORE);
  writeCookies(res, setCookie);
  res.endWithoutBody();
}

/** What uWS throws when a response is written after it was answered or aborted. */
export function isDiscardedResponse(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('uWS.HttpResponse must not be accessed after');
}

/** The 500 page for a request whose handler threw, unless it was answered (or aborted) before the throw. */
export function sendInternalError(res: HttpResponse, head: boolean): void {
  try {
    sendPage(res, internalErrorPage, head);
  } catch (writeErr) {
    if (!isDiscardedResponse(writeErr)) throw writeErr;
  }
}
