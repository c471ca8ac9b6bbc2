/**
 * Wrong link passwords shared over the bus: the message's bounds and checks, what the
 * share does with its own, malformed and undeliverable messages, and two whole
 * redirectors (startRedirector) on one in-process bus throttling as one. The same over a
 * real NATS, between two apps: password-failure-share.int.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../../shared/auth/password-hash.ts';
import { kvBuckets, PASSWORD_FAILURES_SUBJECT, type Bus } from '../../../shared/bus/bus.ts';
import { createMemoryBus } from '../../../shared/bus/memory-bus.ts';
import type { Logger } from '../../../shared/logger.ts';
import { makeLink } from '../../../shared/routing/fixtures.ts';
import { compileLink } from '../../../shared/routing/index.ts';
import { encodeSnapshotEntry } from '../../../shared/snapshot/snapshot-entry.ts';
import { loadRedirectorConfig } from '../config.ts';
import { startRedirector, type RunningRedirector } from '../redirector.ts';
import { decodePasswordFailure, encodePasswordFailure, MAX_PASSWORD_FAILURE_BYTES } from './password-failure-message.ts';
import { sharePasswordFailures } from './password-failure-share.ts';
import type { PasswordLimitKeys } from './password-limits.ts';

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} };
const encode = (s: string) => new TextEncoder().encode(s);
const keys: PasswordLimitKeys = { visitorAndLink: 'v1sitor\nlink_1', addressAndLink: 'addr\nlink_1', address: 'addr' };
/** Lets the in-process bus deliver what was published (it delivers in microtasks). */
const delivered = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('password failure message', () => {
  it('carries the sender and the three keys, and reads back', () => {
    const data = encodePasswordFailure({ from: 'abc', keys });
    expect(data).not.toBeNull();
    expect(decodePasswordFailure(data!)).toEqual({ failure: { from: 'abc', keys } });
  });

  it('ignores fields it does not know (a newer sender)', () => {
    const data = encode(JSON.stringify({ from: 'abc', keys: [keys.visitorAndLink, keys.addressAndLink, keys.address], at: 1 }));
    expect(decodePasswordFailure(data)).toEqual({ failure: { from: 'abc', keys } });
  });

  it('refuses what is too large, not JSON, not UTF-8 or not the shape, without throwing', () => {
    const bad = [
      encode(JSON.stringify({ from: 'abc', keys: ['x'.repeat(MAX_PASSWORD_FAILURE_BYTES), 'a', 'b'] })),
      encode('{"from":'),
      new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]),
      encode('null'),
      encode(JSON.stringify({ from: 'abc', keys: ['a', 'b'] })),
      encode(JSON.stringify({ from: 'abc', keys: ['a', 'b', 'c', 'd'] })),
      encode(JSON.stringify({ from: 'abc', keys: ['a', '', 'c'] })),
      encode(JSON.stringify({ from: 7, keys: ['a', 'b', 'c'] })),
      encode(JSON.stringify({ keys: ['a', 'b', 'c'] })),
      encode(JSON.stringify({ from: 'abc', keys: ['a', 'b', 'x'.repeat(300)] })),
    ];
    for (const data of bad) expect(decodePasswordFailure(data), new TextDecoder().decode(data)).toEqual({ malformed: expect.any(String) });
  });

  it('is not written for keys beyond the bounds', () => {
    expect(encodePasswordFailure({ from: 'abc', keys: { ...keys, address: 'x'.repeat(300) } })).toBeNull();
  });
});

describe('password failure share', () => {
  const recordingLogger = () => {
    const warnings: Array<{ message: string; fields: Record<string, unknown> | undefined }> = [];
    const logger: Logger = { ...silent, warn: (message, fields) => void warnings.push({ message, fields }) };
    return { logger, warnings };
  };

  it('hands on the failures of other redirectors, not its own', async () => {
    const bus = createMemoryBus();
    const [here, there] = [sharePasswordFailures({ bus, instanceId: 'here', logger: silent }), sharePasswordFailures({ bus, instanceId: 'there', logger: silent })];
    const [gotHere, gotThere]: [PasswordLimitKeys[], PasswordLimitKeys[]] = [[], []];
    here.listen((k) => gotHere.push(k));
    there.listen((k) => gotThere.push(k));
    here.publish(keys);
    await delivered();
    expect(gotHere).toEqual([]);
    expect(gotThere).toEqual([keys]);
    there.stop();
    here.publish(keys);
    await delivered();
    expect(gotThere).toEqual([keys]);
    here.stop();
  });

  it('drops malformed messages, saying so at most once a minute with how many', async () => {
    const bus = createMemoryBus();
    const { logger, warnings } = recordingLogger();
    let clock = 1_000_000;
    const share = sharePasswordFailures({ bus, instanceId: 'here', logger, now: () => clock });
    const got: PasswordLimitKeys[] = [];
    share.listen((k) => got.push(k));
    for (let i = 0; i < 5; i++) bus.publish(PASSWORD_FAILURES_SUBJECT, encode(`garbage ${i}`));
    await delivered();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.fields).toMatchObject({ count: 1, reason: 'not JSON' });
    clock += 60_000;
    bus.publish(PASSWORD_FAILURES_SUBJECT, encode('{}'));
    await delivered();
    expect(warnings).toHaveLength(2);
    expect(warnings[1]!.fields).toMatchObject({ count: 5 });
    // A well-formed one still gets through.
    bus.publish(PASSWORD_FAILURES_SUBJECT, encodePasswordFailure({ from: 'there', keys })!);
    await delivered();
    expect(got).toEqual([keys]);
    share.stop();
  });

  it('publishes nothing while the bus is away, and never throws when the bus refuses', () => {
    const published: Uint8Array[] = [];
    let connected = false;
    const { logger, warnings } = recordingLogger();
    const bus = {
      subscribe: () => ({ stop() {} }),
      connected: () => connected,
      publish: (_subject: string, data: Uint8Array) => {
        if (published.push(data) > 1) throw new Error('connection closed');
      },
    } as unknown as Bus;
    const share = sharePasswordFailures({ bus, instanceId: 'here', logger });
    share.publish(keys);
    expect(published).toHaveLength(0);
    connected = true;
    share.publish(keys);
    expect(published).toHaveLength(1);
    expect(() => share.publish(keys)).not.toThrow();
    expect(warnings).toEqual([{ message: expect.stringContaining('not shared'), fields: expect.objectContaining({ count: 1, error: 'connection closed' }) }]);
  });
});

describe('two redirectors on one bus', () => {
  const PASSWORD = 'correct horse battery staple';
  let bus: Bus;
  const redirectors: RunningRedirector[] = [];

  beforeAll(async () => {
    bus = createMemoryBus();
    const link = makeLink({ id: 'link_SHAREDxxxxxxxxxxxxxxxx', shortCode: 'shared', hasPassword: true, passwordHash: await hashPassword(PASSWORD) });
    await (await bus.kv(kvBuckets.snapshot)).put(link.id, encodeSnapshotEntry({ version: 1, linkId: link.id, link: compileLink(link, [], []) }));
    // One wrong answer per visitor, so four per address and link: counted on the address,
    // whose key (unlike a visitor's) does not change at UTC midnight.
    const config = loadRedirectorConfig({ REDIRECT_PORT: '0', ADMIN_PORT: '0', PASSWORD_ATTEMPTS_PER_MINUTE: '1' });
    for (let i = 0; i < 2; i++) redirectors.push(await startRedirector({ config, bus, secret: Buffer.alloc(32, 7), logger: silent }));
  });
  afterAll(async () => {
    for (const r of redirectors) await r.close();
    await bus?.close();
  });

  it('throttle wrong passwords as one: four from one address in all, then both answer 429', async () => {
    const post = (r: RunningRedirector, i: number) =>
      fetch(`${r.url}/shared`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': `share-test ${i}` },
        body: new URLSearchParams({ password: 'wrong' }).toString(),
      }).then((res) => res.status);
    const statuses: number[] = [];
    // The in-process bus hands a failure to the other redirector before the 403 leaves.
    for (let i = 0; i < 4; i++) statuses.push(await post(redirectors[i % 2]!, i));
    expect(statuses).toEqual([403, 403, 403, 403]);
    expect([await post(redirectors[0]!, 4), await post(redirectors[1]!, 5)]).toEqual([429, 429]);
  });
});
