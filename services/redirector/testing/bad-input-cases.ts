/**
 * Generated bad requests for every route the redirector serves (`app.routes`, so a
 * new route is covered without touching this file): odd codes and paths, hostile
 * query strings (pixel parameters included), headers (Host, User-Agent, cookies,
 * forwarded addresses, oversized ones), methods and password-form bodies. Cases
 * uWS cannot parse at all are marked: those may go unanswered (README "Malformed
 * requests"). Generation draws only from `rand`, so a seed gives the same cases again.
 */
import { realUserAgents } from '../../../shared/request-facts/sample-user-agents.ts';
import { edgeDates, hostileEncodings, hostileNumberTexts, hostileStrings, int, invalidUtf8, percentEncode, pick, type Rand } from '../../../shared/testing/hostile-values.ts';
import { wireRequest } from '../../../shared/testing/raw-http.ts';
import type { RedirectorRoute } from '../app.ts';

export interface RedirectorFixtures {
  /** Codes of the default domain: every link state the redirector knows. */
  codes: string[];
  /** A custom domain and a code on it. */
  customDomain: { host: string; code: string };
  /** The password of the protected link among `codes`. */
  password: string;
  /** A valid click id of a link tracked by pixel, and one of a link that is not. */
  clickIds: string[];
}

export interface RedirectorCase {
  label: string;
  bytes: Buffer;
  head: boolean;
  /** uWS cannot parse it: closing the connection, or leaving it to the idle timeout, is its answer. */
  mayGoUnanswered: boolean;
}

function hostileCode(rand: Rand): string | Buffer {
  const r = rand();
  if (r < 0.2) return Buffer.concat([Buffer.from('c'), Buffer.from(pick(rand, invalidUtf8))]);
  if (r < 0.4) return pick(rand, hostileEncodings);
  if (r < 0.5) return 'x'.repeat(pick(rand, [65, 300, 5000]));
  return percentEncode(pick(rand, [...hostileStrings.filter((s) => s !== ''), 'p.gif', 'health', 'ready', 'metrics', 'i', 'link_x']));
}

function query(rand: Rand, fx: RedirectorFixtures, pixel: boolean): string {
  const parts: string[] = [];
  const n = int(rand, 5);
  for (let i = 0; i < n; i++) {
    const r = rand();
    if (pixel && r < 0.5) {
      const name = pick(rand, ['clickId', 'click_id', 'value', 'currency', 'event', 'orderId', 'order_id']);
      const value =
        name.startsWith('click') ? pick(rand, [...fx.clickIds, ...fx.clickIds, 'ck_', 'ck_' + 'A'.repeat(5000), fx.clickIds[0]!.slice(0, -2) + 'AA'])
        : name === 'value' ? pick(rand, hostileNumberTexts)
        : name === 'currency' ? pick(rand, ['EUR', 'eur', 'XXXX', '€', ''])
        : name === 'event' ? pick(rand, ['purchase', 'PURCHASE', 'refund', ''])
        : pick(rand, hostileStrings);
      parts.push(`${name}=${percentEncode(value)}`);
    } else if (r < 0.7) parts.push(`${pick(rand, ['utm_source', 'utm_medium', 'utm_campaign', 'utm_term', 'utm_content', 'qr', 'ref', 'clickId'])}=${rand() < 0.2 ? pick(rand, hostileEncodings) : percentEncode(pick(rand, [...hostileStrings, '1', '0']))}`);
    else if (r < 0.8) parts.push(`${pick(rand, hostileEncodings)}=${pick(rand, hostileEncodings)}`);
    else if (r < 0.85) parts.push('a=1&'.repeat(1000).slice(0, -1));
    else if (r < 0.9) parts.push(`from=${pick(rand, edgeDates)}`);
    else parts.push(pick(rand, ['&', '=', '==', 'x', '%', '?', '#']));
  }
  return parts.length > 0 || rand() < 0.1 ? `?${parts.join('&')}` : '';
}

function pathFor(rand: Rand, route: RedirectorRoute, fx: RedirectorFixtures): { path: string | Buffer; code: string | null } {
  const code = rand() < 0.6 ? pick(rand, fx.codes) : null;
  const segment = code ?? hostileCode(rand);
  const join = (prefix: string, part: string | Buffer) => (typeof part === 'string' ? `${prefix}${part}` : Buffer.concat([Buffer.from(prefix), part]));
  if (route.pattern === '/:code') return { path: join('/', segment), code };
  if (route.pattern === '/i/:code') return { path: join('/i/', segment), code };
  if (route.pattern === '/*') return { path: pick(rand, ['/', '/a/b', '/a/', '//x', '/i/', '/i/a/b', '/p.gif/x', `/${'x'.repeat(5000)}/y`, '/%ff/x', '/health/', '/.well-known/x']), code: null };
  // A static route, now and then with a tail.
  return { path: rand() < 0.9 ? route.pattern : `${route.pattern}${pick(rand, ['/', '/x', '%00', '.', ';x'])}`, code: null };
}

const KNOWN_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE'];
/**
 * uWS closes, without a word, a request whose head (request line and headers) does not
 * fit its buffer: one header of 126,000 bytes was answered here, of 128,000 not, every
 * time. A head past this size may go unanswered, whatever makes it long (a 100 KB
 * header beside a 36 KB query, seed 645532462, case #1934).
 */
const UWS_HEAD_LIMIT = 120_000;

/** Methods uWS does not parse (it closes the connection). */
const UNPARSED_METHODS = ['PROPFIND', 'FOO', 'get', 'G(T'];

export function generateRedirectorCases(rand: Rand, routes: readonly RedirectorRoute[], fx: RedirectorFixtures, count: number): RedirectorCase[] {
  const cases: RedirectorCase[] = [];
  for (let index = 0; index < count; index++) {
    // Half on the short-code routes, where nearly all the redirector's work is.
    const codeRoutes = routes.filter((r) => r.pattern.includes(':code'));
    const route = rand() < 0.5 && codeRoutes.length > 0 ? pick(rand, codeRoutes) : pick(rand, routes);
    let method = route.method === 'any' ? pick(rand, KNOWN_METHODS) : route.method.toUpperCase();
    const { path, code } = pathFor(rand, route, fx);
    const target = typeof path === 'string' ? `${path}${query(rand, fx, route.pattern === '/p.gif')}` : path;
    const headers: Array<[string, string | Uint8Array]> = [['host', code !== null && code === fx.customDomain.code && rand() < 0.5 ? fx.customDomain.host : 'go.test']];
    let body: Buffer | undefined;
    let version = 'HTTP/1.1';
    let mayGoUnanswered = false;

    const r = rand();
    if (r < 0.25) headers.push(['user-agent', pick(rand, [...Object.values(realUserAgents), 'curl/8.0', '', 'x'.repeat(8000), 'Mozilla/5.0 \u00ff\u00fe', 'facebookexternalhit/1.1'])]);
    else if (r < 0.35) headers[0] = ['host', pick(rand, [`${fx.customDomain.host}:443`, fx.customDomain.host.toUpperCase(), `${fx.customDomain.host}.`, '', '\u00ff\u00fe', 'a'.repeat(300), '[::1]:8080', 'x:99999'])];
    else if (r < 0.45) headers.push(['cookie', pick(rand, ['lr_vid=', 'lr_vid=' + 'a'.repeat(4000), 'lr_vid=%ff', 'lr_vid=a; lr_vid=b', '\u00ff', '=;=;', 'lr_vid=' + 'v'.repeat(30)])]);
    else if (r < 0.55) headers.push(['x-forwarded-for', pick(rand, ['1.2.3.4', '1.2.3.4, 5.6.7.8', '::ffff:1.2.3.4', 'not-an-ip', '999.1.1.1', '', ',,,', '1.2.3.4\u00ff', 'x'.repeat(2000)])]);
    else if (r < 0.6) headers.push(['cf-ipcountry', pick(rand, ['DE', 'XX', 'T1', 'de', '', 'ZZZ', '\u00ff\u00ff'])]);
    else if (r < 0.65) headers.push(['referer', pick(rand, ['https://t.co/x', 'not a url', 'http://[::1', 'x'.repeat(8000), 'https://\u00ff.example/'])], ['accept-language', pick(rand, ['de-DE,de;q=0.9', ';;;', 'x'.repeat(500)])]);
    else if (r < 0.7) headers.push(['x-big', 'a'.repeat(pick(rand, [17_000, 70_000, 100_000]))]);
    else if (r < 0.74) {
      // What uWS refuses without a word.
      mayGoUnanswered = true;
      const w = rand();
      if (w < 0.3) method = pick(rand, UNPARSED_METHODS);
      else if (w < 0.5) for (let n = 0; n < 60; n++) headers.push([`x-h${n}`, 'v']);
      else if (w < 0.7) version = pick(rand, ['HTTP/1.0', 'HTTP/2.0', 'HTTP/0.9']);
      else if (w < 0.85) headers.shift(); // no Host
      else headers.push(['x-big', 'a'.repeat(400_000)]);
    }
    if (method === 'POST' || (rand() < 0.1 && method !== 'GET' && method !== 'HEAD')) {
      const b = rand();
      const password = pick(rand, [fx.password, 'wrong', '', 'x'.repeat(5000)]);
      if (b < 0.5) body = Buffer.from(`password=${percentEncode(password)}${rand() < 0.2 ? '&password=again' : ''}`);
      else if (b < 0.6) body = Buffer.concat([Buffer.from('password='), Buffer.from(pick(rand, invalidUtf8))]);
      else if (b < 0.7) body = Buffer.from(`password=${pick(rand, hostileEncodings)}`);
      else if (b < 0.8) body = Buffer.alloc(5000, 0x61);
      else if (b < 0.9) body = Buffer.from(JSON.stringify({ password }));
      else body = Buffer.alloc(0);
      headers.push(['content-type', pick(rand, ['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded; charset=utf-8', 'application/json', 'text/plain', 'multipart/form-data; boundary=x', ''])]);
      const framing = rand();
      if (framing < 0.8) headers.push(['content-length', String(body.length)]);
      else if (framing < 0.9) {
        headers.push(['transfer-encoding', 'chunked']);
        body = body.length === 0 ? Buffer.from('0\r\n\r\n') : Buffer.concat([Buffer.from(`${body.length.toString(16)}\r\n`), body, Buffer.from('\r\n0\r\n\r\n')]);
      } else {
        // Declared far beyond the form's limit: refused before a byte is read.
        headers.push(['content-length', '99999999']);
        body = Buffer.alloc(0);
      }
    }
    headers.push(['connection', 'close']);
    const bytes = wireRequest(method, target, headers, body, version);
    if (bytes.indexOf('\r\n\r\n') > UWS_HEAD_LIMIT) mayGoUnanswered = true;
    const shown = (part: string | Uint8Array) => (typeof part === 'string' ? part : Buffer.from(part).toString('latin1')).slice(0, 80);
    cases.push({
      label: `#${index} ${method} ${shown(target)} ${version} {${headers.filter(([n]) => n !== 'connection').slice(0, 4).map(([n, v]) => `${n}: ${shown(v)}`).join('; ')}}${body ? ` ${body.subarray(0, 80).toString('latin1')}` : ''}`,
      bytes,
      head: method === 'HEAD',
      mayGoUnanswered,
    });
  }
  return cases;
}
