/**
 * The small HTML pages of the redirect domain. Anything variable (URLs, messages) is
 * HTML-escaped into attributes or text; no page reflects the request path or query (the
 * password form carries the Referer's host, escaped, in a hidden field), and
 * the one script is static (its values come from data attributes), so a CSP that allows
 * only that script's hash blocks any injected one as a second line of defence.
 */
import { createHash } from 'node:crypto';

export interface Page {
  status: string;
  body: Buffer;
  /** The page's Content-Security-Policy. */
  csp: string;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' };

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c]!);
}

const BASE_CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'";

function shell(title: string, content: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:15vh auto;padding:0 1rem;color:#222}
h1{font-size:1.4rem}input{font:inherit;padding:.4rem;width:100%;box-sizing:border-box;margin:.4rem 0}
button{font:inherit;padding:.4rem 1rem}.error{color:#b00020}</style></head>
<body>${content}</body></html>
`;
}

function page(status: string, title: string, content: string, csp = BASE_CSP): Page {
  return { status, body: Buffer.from(shell(title, content)), csp };
}

export const notFoundPage: Page = page('404 Not Found', 'Link not found', '<h1>Link not found</h1><p>This link does not exist or is no longer active.</p>');

export const expiredPage: Page = page('410 Gone', 'Link expired', '<h1>This link has expired</h1>');

export const clicksLimitPage: Page = page('410 Gone', 'Link unavailable', '<h1>This link has reached its click limit</h1>');

export const methodNotAllowedPage: Page = page('405 Method Not Allowed', 'Method not allowed', '<h1>Method not allowed</h1>');

export const payloadTooLargePage: Page = page('413 Payload Too Large', 'Request too large', '<h1>Request too large</h1>');

export const unsupportedMediaPage: Page = page('415 Unsupported Media Type', 'Unsupported request', '<h1>Unsupported request</h1><p>Please submit the form.</p>');

export const internalErrorPage: Page = page('500 Internal Server Error', 'Error', '<h1>Something went wrong</h1><p>Please try again.</p>');

export const unavailablePage: Page = page('503 Service Unavailable', 'Unavailable', '<h1>This link is temporarily unavailable</h1><p>Please try again shortly.</p>');

export const tooManyAttemptsPage: Page = page(
  '429 Too Many Requests',
  'Too many attempts',
  '<h1>Too many attempts</h1><p>Too many wrong passwords. Please wait a minute and try again.</p>',
);

/** The password form's hidden field carrying the visitor's referrer host (password-post.ts). */
export const REFERRER_FIELD = 'referrer';

/**
 * The password form. It has no action attribute, so it posts back to the exact URL the
 * visitor opened (short code and query, e.g. utm and QR marker, included) without this
 * page ever echoing that URL. The post's own Referer is then this page, so the referrer
 * host the visitor came with (`referrer`, null for none) rides along in a hidden field,
 * escaped, for the click the right password records.
 */
function buildPasswordPage(wrongPassword: boolean, referrer: string | null): Page {
  const error = wrongPassword ? '<p class="error" role="alert">Wrong password. Please try again.</p>' : '';
  const carried = referrer === null ? '' : `\n<input type="hidden" name="${REFERRER_FIELD}" value="${escapeHtml(referrer)}">`;
  return page(
    wrongPassword ? '403 Forbidden' : '200 OK',
    'Password required',
    `<h1>This link is password protected</h1>${error}
<form method="post"><label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required autofocus>${carried}
<button type="submit">Continue</button></form>`,
  );
}

const passwordFormPage: Page = buildPasswordPage(false, null);
const wrongPasswordPage: Page = buildPasswordPage(true, null);

/** The password form (200), or its answer to a wrong password (403); built per request only to carry a referrer. */
export function passwordPage(wrongPassword: boolean, referrer: string | null): Page {
  if (referrer === null) return wrongPassword ? wrongPasswordPage : passwordFormPage;
  return buildPasswordPage(wrongPassword, referrer);
}

/** Static, so its hash can be pinned in the CSP; the URLs come from data attributes. */
const DEEP_LINK_SCRIPT =
  "(function(){var d=document.getElementById('lr');var app=d.getAttribute('data-app');var fb=d.getAttribute('data-fallback');" +
  "var t=setTimeout(function(){window.location.replace(fb)},1500);" +
  "document.addEventListener('visibilitychange',function(){if(document.hidden)clearTimeout(t)});" +
  'window.location.href=app})();';
const DEEP_LINK_SCRIPT_HASH = createHash('sha256').update(DEEP_LINK_SCRIPT).digest('base64');
const DEEP_LINK_CSP = `${BASE_CSP}; script-src 'sha256-${DEEP_LINK_SCRIPT_HASH}'`;

/**
 * iOS deep link: open the app, and if the page is still visible after ~1.5 s (no app to
 * take over) go to the fallback. Both URLs are checked by the caller (app URL without a
 * script scheme, http(s) fallback) and escaped here.
 */
export function deepLinkPage(appUrl: string, fallbackUrl: string): Page {
  const fallback = escapeHtml(fallbackUrl);
  return page(
    '200 OK',
    'Opening the app',
    `<h1>Opening the app…</h1><p>If nothing happens, <a href="${fallback}">continue to the website</a>.</p>
<div id="lr" data-app="${escapeHtml(appUrl)}" data-fallback="${fallback}" hidden></div>
<script>${DEEP_LINK_SCRIPT}</script>`,
    DEEP_LINK_CSP,
  );
}
