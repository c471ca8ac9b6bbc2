/**
 * A visitor who gave a link's right password is not asked again on that browser for a day
 * (Short.io and Dub remember it too): the answer to the right password sets `lr_pw`,
 * scoped to the link's path, holding the pass's expiry and a MAC over (link id, the link's
 * password hash, expiry) under the deployment's secret. Every redirector sharing the secret
 * accepts it. The password itself is never in the cookie, and the pass is void for another
 * link, after its expiry, and once the link's password changes (a new hash).
 *
 * No `Secure` attribute, as with the visitor cookie: the redirect domain may be plain http.
 * Path scoping keeps one link's pass off every other link's requests; the MAC, not the
 * path, is what makes a pass valid only for its link.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const PASSWORD_PASS_COOKIE = 'lr_pw';
export const PASSWORD_PASS_SECONDS = 86_400;

const NAME_EQ = `${PASSWORD_PASS_COOKIE}=`;
const MAC_BYTES = 18;
/**
 * A browser sends one pass per link path, so a request holds one, or a few where paths
 * nest: more are not looked at, or a request could ask for hundreds of MACs.
 */
const MAX_PASSES_CHECKED = 4;

export interface ProtectedLink {
  id: string;
  passwordHash: string | null;
}

function passMac(secret: Buffer, link: ProtectedLink, expires: number): Buffer {
  return createHmac('sha256', secret)
    .update(`linkroute:link-password-pass\n${link.id}\n${link.passwordHash ?? ''}\n${expires}`)
    .digest()
    .subarray(0, MAC_BYTES);
}

/** The Set-Cookie line of a pass for `link`, valid from `now` (epoch ms) for PASSWORD_PASS_SECONDS. */
export function passwordPassCookie(secret: Buffer, link: ProtectedLink, shortCode: string, now: number): string {
  const expires = Math.floor(now / 1000) + PASSWORD_PASS_SECONDS;
  const value = `${expires}.${passMac(secret, link, expires).toString('base64url')}`;
  return `${NAME_EQ}${value}; Max-Age=${PASSWORD_PASS_SECONDS}; Path=/${encodeURIComponent(shortCode)}; HttpOnly; SameSite=Lax`;
}

/** Whether the Cookie header holds an unexpired pass for `link` (any of several `lr_pw` pairs). */
export function hasPasswordPass(cookieHeader: string, secret: Buffer, link: ProtectedLink, now: number): boolean {
  if (link.passwordHash === null || link.passwordHash === '') return false;
  let checked = 0;
  for (const pair of cookieHeader.split(';')) {
    const trimmed = pair.trim();
    if (!trimmed.startsWith(NAME_EQ)) continue;
    if (++checked > MAX_PASSES_CHECKED) return false;
    const [expiresText, macText] = trimmed.slice(NAME_EQ.length).split('.', 2);
    if (expiresText === undefined || macText === undefined || !/^\d{1,12}$/.test(expiresText)) continue;
    const expires = Number(expiresText);
    if (expires * 1000 <= now) continue;
    const given = Buffer.from(macText, 'base64url');
    if (given.length === MAC_BYTES && timingSafeEqual(given, passMac(secret, link, expires))) return true;
  }
  return false;
}
