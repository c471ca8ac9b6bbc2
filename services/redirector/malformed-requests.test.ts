/**
 * What the redirector does with requests its HTTP parser (uWebSockets.js) refuses.
 * uWS answers nothing to those: it closes the connection at once, or waits for
 * more bytes until its idle timeout (about 10 s) closes it. That is acceptable for
 * a public redirect port (no client gets a 5xx or a misleading page), and it is
 * what README "Malformed requests" documents; these tests pin it, so an upgrade of
 * uWS that changes it shows up here. Everything it does parse gets a real answer.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../shared/ids.ts';
import type { Logger } from '../../shared/logger.ts';
import { GeoIp } from '../../shared/request-facts/geo-ip.ts';
import { makeLink } from '../../shared/routing/fixtures.ts';
import { compileLink } from '../../shared/routing/index.ts';
import { rawExchange } from '../../shared/testing/raw-http.ts';
import { createRedirectorApp, type RedirectorApp } from './app.ts';
import { loadRedirectorConfig } from './config.ts';
import { SnapshotStore } from './snapshot/snapshot-store.ts';

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const latin1 = (text: string) => Buffer.from(text, 'latin1');
/** Long enough to tell "no answer" from a slow one on a busy machine; far below the idle timeout. */
const NO_ANSWER_MS = 1_500;

describe('requests the redirector cannot parse', () => {
  const store = new SnapshotStore();
  let app: RedirectorApp;
  let port: number;

  beforeAll(async () => {
    store.setReady(true);
    const id = newId('link');
    store.apply({ version: 1, linkId: id, link: compileLink(makeLink({ id, shortCode: 'plain', defaultDestination: 'https://example.com/p' }), [], []) });
    app = createRedirectorApp({ lookup: store, sink: { emit() {} }, secret: randomBytes(32), config: loadRedirectorConfig({}), logger: silent, geo: GeoIp.open() });
    ({ port } = await app.listen(0, '127.0.0.1'));
  });
  afterAll(() => app?.close());

  const headers = (n: number) => Array.from({ length: n }, (_, i) => `x-h${i}: v\r\n`).join('');

  it('are never answered with a 5xx: closed, or left to the idle timeout', async () => {
    const refused: Array<[string, Buffer]> = [
      ['an unknown method', latin1('PROPFIND /plain HTTP/1.1\r\nhost: x\r\n\r\n')],
      ['a lowercase method', latin1('get /plain HTTP/1.1\r\nhost: x\r\n\r\n')],
      ['a method with invalid characters', latin1('G(T /plain HTTP/1.1\r\nhost: x\r\n\r\n')],
      ['no Host header', latin1('GET /plain HTTP/1.1\r\n\r\n')],
      ['Content-Length beside chunked', latin1('POST /plain HTTP/1.1\r\nhost: x\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n')],
      ['a bad chunk size', latin1('POST /plain HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n')],
      ['headers over 300 KB', latin1(`GET /plain HTTP/1.1\r\nhost: x\r\nx-big: ${'a'.repeat(300_000)}\r\n\r\n`)],
      ['more than 48 headers', latin1(`GET /plain HTTP/1.1\r\nhost: x\r\n${headers(60)}\r\n`)],
      ['HTTP/1.0', latin1('GET /plain HTTP/1.0\r\nhost: x\r\n\r\n')],
      ['an unknown HTTP version', latin1('GET /plain HTTP/9.9\r\nhost: x\r\n\r\n')],
      ['no HTTP version', latin1('GET /plain\r\nhost: x\r\n\r\n')],
      ['a control character in the path', latin1('GET /pl\x01ain HTTP/1.1\r\nhost: x\r\n\r\n')],
      ['a header without a colon', latin1('GET /plain HTTP/1.1\r\nhost: x\r\nnonsense\r\n\r\n')],
      ['a TLS hello on the plain port', Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03, 0x0d, 0x0a, 0x0d, 0x0a])],
    ];
    // Side by side: most of them wait out NO_ANSWER_MS.
    const answers = await Promise.all(refused.map(([, bytes]) => rawExchange(port, bytes, NO_ANSWER_MS)));
    answers.forEach((answer, i) => {
      const label = refused[i]![0];
      // An answer would be a 4xx at worst; today uWS gives none.
      if (typeof answer === 'object') expect(answer.status, label).toBeLessThan(500);
      else expect(['closed', 'timeout'], label).toContain(answer);
    });
  });

  it('answers what it can parse, however odd: long headers, odd bytes in path and Host, any known method', async () => {
    const answered: Array<[string, Buffer, number]> = [
      ['a 100 KB header', latin1(`GET /plain HTTP/1.1\r\nhost: x\r\nconnection: close\r\nx-big: ${'a'.repeat(100_000)}\r\n\r\n`), 302],
      ['48 headers', latin1(`GET /plain HTTP/1.1\r\nhost: x\r\nconnection: close\r\n${headers(46)}\r\n`), 302],
      ['invalid UTF-8 in the path', latin1('GET /pl\xff\xfe HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n'), 404],
      ['a 10 KB path', latin1(`GET /${'a'.repeat(10_000)} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`), 404],
      ['invalid bytes in Host', latin1('GET /plain HTTP/1.1\r\nhost: \xff\xfe:99999\r\nconnection: close\r\n\r\n'), 302],
      ['an empty Host', latin1('GET /plain HTTP/1.1\r\nhost: \r\nconnection: close\r\n\r\n'), 302],
      ['PUT', latin1('PUT /plain HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-length: 0\r\n\r\n'), 404],
      ['DELETE', latin1('DELETE /plain HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n'), 404],
      ['OPTIONS', latin1('OPTIONS /plain HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n'), 404],
      ['TRACE', latin1('TRACE /plain HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n'), 404],
      ['two Content-Lengths on a form post', latin1('POST /plain HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\nab'), 405],
    ];
    for (const [label, bytes, status] of answered) {
      const answer = await rawExchange(port, bytes, 10_000);
      expect(typeof answer === 'object' ? answer.status : answer, label).toBe(status);
    }
    // And it goes on serving.
    const after = await rawExchange(port, { method: 'GET', path: '/plain' });
    expect(typeof after === 'object' && after.status).toBe(302);
  });
});
