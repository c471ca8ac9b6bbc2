/**
 * Two redirector apps, each on its own connection to one real NATS, behind an imagined
 * round-robin balancer: wrong passwords alternated between them count once, against one
 * limit, per visitor and link, per address and link and per address across links. Each
 * app's clock is fixed (no sliding minute runs out, no UTC midnight changes a visitor's
 * id), and after each wrong answer the test waits until both apps have received its
 * failure from the bus, so what it asserts does not depend on timing. (Before failures
 * were shared, each app counted only its own: 403 six times, then 429, for a limit of 3.)
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../../shared/auth/password-hash.ts';
import type { Bus } from '../../../shared/bus/bus.ts';
import { connectNatsBus } from '../../../shared/bus/nats-bus.ts';
import type { Logger } from '../../../shared/logger.ts';
import { GeoIp } from '../../../shared/request-facts/geo-ip.ts';
import { makeLink } from '../../../shared/routing/fixtures.ts';
import { compileLink } from '../../../shared/routing/index.ts';
import { createRedirectorApp, type RedirectorApp } from '../app.ts';
import { loadRedirectorConfig } from '../config.ts';
import { SnapshotStore } from '../snapshot/snapshot-store.ts';
import { decodePasswordFailure } from './password-failure-message.ts';
import { sharePasswordFailures, type PasswordFailureShare } from './password-failure-share.ts';

const NATS_URL = 'nats://127.0.0.1:4222';
const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const PASSWORD = 'correct horse battery staple';
const DESTINATION = 'https://example.com/behind-a-password';
const NOW = Date.parse('2026-05-04T12:00:00Z');
/** Per visitor and link; 4 x per address and link, 12 x per address across links. */
const LIMIT = 3;
const ARRIVAL_WAIT_MS = 5_000;

interface Redirector {
  url: string;
  app: RedirectorApp;
  bus: Bus;
  share: PasswordFailureShare;
  /** Failures of this test's two apps this one has received from the bus, its own included. */
  received: number;
}

describe('wrong link passwords shared by two redirectors over NATS', () => {
  const redirectors: Redirector[] = [];
  /** Wrong answers (403) both apps have given so far. */
  let failures = 0;
  const instanceIds = ['redirector-a', 'redirector-b'].map((name) => `${name}-${randomBytes(4).toString('hex')}`);

  beforeAll(async () => {
    const store = new SnapshotStore();
    const passwordHash = await hashPassword(PASSWORD);
    for (const shortCode of ['locked', 'all-a', 'all-b', 'all-c', 'all-d']) {
      const link = makeLink({ id: `link_${shortCode.replace('-', '').padEnd(22, 'x')}`, shortCode, defaultDestination: DESTINATION, hasPassword: true, passwordHash });
      store.apply({ version: 1, linkId: link.id, link: compileLink(link, [], []) });
    }
    // A fresh secret: keys no other redirector on this NATS (other test files) can share.
    const secret = randomBytes(32);
    const config = loadRedirectorConfig({ PASSWORD_ATTEMPTS_PER_MINUTE: String(LIMIT), TRUSTED_IP_HEADER: 'x-forwarded-for' });
    const geo = GeoIp.open();
    for (const instanceId of instanceIds) {
      const bus = await connectNatsBus(NATS_URL, { name: instanceId, logger: silent, replicas: 1 });
      const redirector = { received: 0 } as Redirector;
      // Counts what the share is handed, to know when a failure has arrived.
      const counting: Bus = {
        ...bus,
        subscribe: (subject, onMessage) =>
          bus.subscribe(subject, (data) => {
            onMessage(data);
            const decoded = decodePasswordFailure(data);
            if ('failure' in decoded && instanceIds.includes(decoded.failure.from)) redirector.received++;
          }),
      };
      const share = sharePasswordFailures({ bus: counting, instanceId, logger: silent });
      const app = createRedirectorApp({ lookup: store, sink: { emit() {} }, secret, config, logger: silent, geo, now: () => NOW, passwordFailures: share });
      Object.assign(redirector, { bus, share, app, url: (await app.listen(0, '127.0.0.1')).url });
      redirectors.push(redirector);
    }
  });

  afterAll(async () => {
    for (const r of redirectors) {
      r.app.close();
      r.share.stop();
      await r.bus.close();
    }
  });

  /** Until both apps hold every failure so far (bounded: a failure that never comes shows in the statuses). */
  async function failuresArrived(): Promise<void> {
    const deadline = Date.now() + ARRIVAL_WAIT_MS;
    while (redirectors.some((r) => r.received < failures) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 5));
  }

  async function post(which: number, password: string, from: { ua: string; ip: string }, code = 'locked') {
    const res = await fetch(`${redirectors[which % 2]!.url}/${code}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': from.ua, 'x-forwarded-for': from.ip },
      body: new URLSearchParams({ password }).toString(),
    });
    await res.arrayBuffer();
    if (res.status === 403) {
      failures++;
      await failuresArrived();
    }
    return res;
  }
  const status = async (...args: Parameters<typeof post>) => (await post(...args)).status;

  it('per visitor and link: PASSWORD_ATTEMPTS_PER_MINUTE wrong answers in all, then both answer 429, even to the right password', async () => {
    const visitor = { ua: 'shared-throttle visitor', ip: '192.0.2.1' };
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) statuses.push(await status(i, `wrong-${i}`, visitor));
    expect(statuses).toEqual([403, 403, 403, 429, 429, 429, 429, 429]);
    const [a, b] = [await post(0, PASSWORD, visitor), await post(1, PASSWORD, visitor)];
    expect([a.status, b.status]).toEqual([429, 429]);
    expect(Number(b.headers.get('retry-after'))).toBe(60);
  });

  it('a right password redirects and is charged nowhere; only wrong ones count', async () => {
    const visitor = { ua: 'shared-throttle right', ip: '192.0.2.2' };
    const before = redirectors.map((r) => r.received);
    expect(await status(0, 'wrong', visitor)).toBe(403);
    const right = await post(1, PASSWORD, visitor);
    expect(right.status).toBe(302);
    expect(right.headers.get('location')).toBe(DESTINATION);
    expect(await status(0, PASSWORD, visitor)).toBe(302);
    expect(await status(1, 'wrong', visitor)).toBe(403);
    // The third wrong answer: had either right one counted (here or there), it would be a 429.
    expect(await status(0, 'wrong', visitor)).toBe(403);
    expect([await status(1, PASSWORD, visitor), await status(0, PASSWORD, visitor)]).toEqual([429, 429]);
    // Three failures went over the bus, no more: the right answers were not sent.
    expect(redirectors.map((r, i) => r.received - before[i]!)).toEqual([3, 3]);
  });

  it('per address and link: four times the limit in all from one address, whatever the User-Agents', async () => {
    const ip = '192.0.2.3';
    const statuses: number[] = [];
    for (let i = 0; i < 4 * LIMIT; i++) statuses.push(await status(i, 'wrong', { ua: `shared-throttle rotating ${i}`, ip }));
    expect(statuses.every((s) => s === 403)).toBe(true);
    expect([await status(0, 'wrong', { ua: 'shared-throttle fresh a', ip }), await status(1, 'wrong', { ua: 'shared-throttle fresh b', ip })]).toEqual([429, 429]);
  });

  it('per address across links: twelve times the limit in all from one address', async () => {
    const ip = '192.0.2.4';
    const statuses: number[] = [];
    // 9 wrong answers on each of 4 links, 3 per User-Agent: under every per-link limit (3 per visitor, 12 per address).
    let i = 0;
    for (const code of ['all-a', 'all-b', 'all-c', 'all-d']) {
      for (let j = 0; j < 9; j++, i++) statuses.push(await status(i, 'wrong', { ua: `shared-throttle ${code} ${Math.floor(j / 3)}`, ip }, code));
    }
    expect(statuses).toHaveLength(12 * LIMIT);
    expect(statuses.every((s) => s === 403)).toBe(true);
    expect([await status(0, 'wrong', { ua: 'shared-throttle fifth a', ip }), await status(1, 'wrong', { ua: 'shared-throttle fifth b', ip })]).toEqual([429, 429]);
  });
});
