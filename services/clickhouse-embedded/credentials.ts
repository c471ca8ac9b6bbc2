import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * The embedded endpoint's one user, `default`, and its password, given the ways
 * ClickHouse's HTTP interface takes them: HTTP Basic (what @clickhouse/client
 * sends), the X-ClickHouse-User / X-ClickHouse-Key headers, or the `user` and
 * `password` URL parameters.
 */
export const EMBEDDED_USER = 'default';

export function presentsPassword(req: IncomingMessage, url: URL, password: string): boolean {
  const given = credentialsOf(req, url);
  return given !== null && given.user === EMBEDDED_USER && sameText(given.password, password);
}

function credentialsOf(req: IncomingMessage, url: URL): { user: string; password: string } | null {
  const auth = req.headers.authorization;
  if (auth?.startsWith('Basic ')) {
    const decoded = Buffer.from(auth.slice(6).trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    if (colon === -1) return null;
    return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  const headerKey = req.headers['x-clickhouse-key'];
  if (typeof headerKey === 'string') {
    const user = req.headers['x-clickhouse-user'];
    return { user: typeof user === 'string' ? user : EMBEDDED_USER, password: headerKey };
  }
  const paramPassword = url.searchParams.get('password');
  if (paramPassword !== null) return { user: url.searchParams.get('user') ?? EMBEDDED_USER, password: paramPassword };
  return null;
}

/** Compared as digests, so the time taken tells nothing about the password. */
function sameText(a: string, b: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(a), digest(b));
}
