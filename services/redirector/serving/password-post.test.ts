/**
 * A password POST whose link is gone from the snapshot by the time its slow hash check
 * ends: answered 404 like an unknown code, and counted as one in /metrics.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../../shared/auth/password-hash.ts';
import { newId } from '../../../shared/ids.ts';
import type { Logger } from '../../../shared/logger.ts';
import { makeLink } from '../../../shared/routing/fixtures.ts';
import { compileLink } from '../../../shared/routing/index.ts';
import { createRedirectorApp, type RedirectorApp } from '../app.ts';
import { loadRedirectorConfig } from '../config.ts';
import { SnapshotStore } from '../snapshot/snapshot-store.ts';
import { GeoIp } from '../../../shared/request-facts/geo-ip.ts';

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const PASSWORD = 'correct horse battery staple';

describe('password POST on a link removed during the check', () => {
  let app: RedirectorApp;
  let base: string;
  const store = new SnapshotStore();
  let finds = 0;

  beforeAll(async () => {
    const link = makeLink({ id: 'link_LOCKEDxxxxxxxxxxxxxxxxx', shortCode: 'locked', hasPassword: true });
    store.apply({ version: 1, linkId: link.id, link: { ...compileLink(link, [], []), passwordHash: await hashPassword(PASSWORD) } });
    // The handler looks the link up when the POST arrives and again after the hash
    // check: the second lookup sees the link deleted meanwhile.
    const lookup = Object.create(store) as SnapshotStore;
    lookup.find = (host, code) => (++finds === 1 ? store.find(host, code) : undefined);
    app = createRedirectorApp({ lookup, sink: { emit() {} }, secret: randomBytes(32), config: loadRedirectorConfig({}), logger: silent, geo: GeoIp.open() });
    base = (await app.listen(0, '127.0.0.1')).url;
  });
  afterAll(() => app?.close());

  it('answers 404 and counts it as not_found', async () => {
    const res = await fetch(`${base}/locked`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ password: PASSWORD }).toString(),
    });
    expect(res.status).toBe(404);
    expect(finds).toBe(2);
    const metrics = await app.metrics.metrics();
    expect(metrics).toMatch(/^linkroute_redirector_requests_total\{outcome="not_found"\} 1$/m);
  });
});

describe('password checks under way at once', () => {
  let app: RedirectorApp;
  let base: string;

  beforeAll(async () => {
    const store = new SnapshotStore();
    const link = makeLink({ id: newId('link'), shortCode: 'gated', hasPassword: true });
    store.apply({ version: 1, linkId: link.id, link: { ...compileLink(link, [], []), passwordHash: await hashPassword(PASSWORD) } });
    app = createRedirectorApp({ lookup: store, sink: { emit() {} }, secret: randomBytes(32), config: loadRedirectorConfig({ PASSWORD_CHECKS_IN_FLIGHT: '1' }), logger: silent, geo: GeoIp.open() });
    base = (await app.listen(0, '127.0.0.1')).url;
  });
  afterAll(() => app?.close());

  const post = (i: number) =>
    fetch(`${base}/gated`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': `gate-test ${i}` },
      body: new URLSearchParams({ password: PASSWORD }).toString(),
    });

  it('beyond PASSWORD_CHECKS_IN_FLIGHT, a post is a 503 to retry a second later; the next one is checked again', async () => {
    // Six at once against one check at a time: the first holds the check (scrypt) while the others arrive.
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => post(i)));
    const statuses = answers.map((r) => r.status);
    expect(statuses).toContain(302);
    expect(statuses).toContain(503);
    expect(answers.filter((r) => r.status === 503).every((r) => r.headers.get('retry-after') === '1')).toBe(true);
    expect((await post(7)).status).toBe(302);
  });
});

describe('password POST whose answer fails after the check', () => {
  let app: RedirectorApp;
  let base: string;

  beforeAll(async () => {
    const store = new SnapshotStore();
    // An id no click id can be issued for: serving the link throws once the password is right.
    const link = makeLink({ id: 'link_not-a-valid-id', shortCode: 'broken', hasPassword: true });
    store.apply({ version: 1, linkId: link.id, link: { ...compileLink(link, [], []), passwordHash: await hashPassword(PASSWORD) } });
    app = createRedirectorApp({ lookup: store, sink: { emit() {} }, secret: randomBytes(32), config: loadRedirectorConfig({}), logger: silent, geo: GeoIp.open() });
    base = (await app.listen(0, '127.0.0.1')).url;
  });
  afterAll(() => app?.close());

  it('answers 500 (it hung before: the request was marked answered before the throw) and counts an error', async () => {
    const res = await fetch(`${base}/broken`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ password: PASSWORD }).toString(),
      signal: AbortSignal.timeout(10_000),
    });
    expect(res.status).toBe(500);
    expect(await app.metrics.metrics()).toMatch(/^linkroute_redirector_requests_total\{outcome="error"\} 1$/m);
  });
});
