import { describe, expect, it, vi } from 'vitest';
import type { Bus } from '../../../shared/bus/bus.ts';
import type { Logger } from '../../../shared/logger.ts';
import { clickEventFields, clickEventSchema, eventSubjects, type ClickEvent } from '../../../shared/schemas/click-event.ts';
import { sampleClickEvent } from '../../../shared/testing/click-event-fixture.ts';
import { eventPublisher } from './event-publisher.ts';

const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };

interface Sent {
  subject: string;
  msgId: string;
  data: Uint8Array;
  at: number;
}

/** A bus whose publishEvent records messages; `fail` decides per attempt whether it rejects. */
function fakeBus(options: { delayMs?: number; fail?: (attempt: number) => boolean } = {}) {
  const sent: Sent[] = [];
  const attempts: string[] = [];
  const bus = {
    async publishEvent(subject: string, data: Uint8Array, msgId: string) {
      attempts.push(msgId);
      if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
      if (options.fail?.(attempts.length)) throw new Error('bus down');
      sent.push({ subject, msgId, data: data.slice(), at: Date.now() });
    },
  } as unknown as Bus;
  return { bus, sent, attempts };
}

function click(i: number, overrides: Partial<ClickEvent> = {}): ClickEvent {
  return sampleClickEvent({
    id: `ck_${String(i).padStart(60, '0')}`,
    ts: 1_763_790_000_000 + i,
    workspaceId: 'ws_1',
    linkId: 'link_BENCH00000000000012345',
    campaignId: 'cmp_1',
    visitorId: 'abcdefghijklmnopqrstuv',
    country: 'FR',
    region: 'Occitanie',
    city: 'Toulouse',
    deviceClass: 'desktop',
    os: 'linux',
    browser: 'Firefox',
    destination: 'https://example.com/',
    ...overrides,
  });
}

/** Every event of every message, parsed and validated as the ingester does. */
function received(sent: Sent[]): ClickEvent[] {
  const decoder = new TextDecoder();
  return sent.flatMap((m) =>
    decoder
      .decode(m.data)
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => clickEventSchema.parse(JSON.parse(line))),
  );
}

describe('eventPublisher', () => {
  it('publishes every event once, in order, as NDJSON batches of at most batchSize', async () => {
    const { bus, sent } = fakeBus();
    const publisher = eventPublisher({ bus, logger: quiet, instanceId: 'r1', batchSize: 100 });
    const events = Array.from({ length: 1_234 }, (_, i) => click(i, { utmSource: i % 7 === 0 ? 'say "hi"\n' : null }));
    for (const e of events) publisher.emit(e);
    await publisher.flush();
    expect(received(sent)).toEqual(events);
    expect(sent.every((m) => m.subject === eventSubjects.clicks)).toBe(true);
    expect(Math.max(...sent.map((m) => new TextDecoder().decode(m.data).split('\n').length - 1))).toBeLessThanOrEqual(100);
    expect(new Set(sent.map((m) => m.msgId)).size).toBe(sent.length);
    expect(publisher.stats()).toEqual({ published: 1_234, buffered: 0, dropped: 0, publishFailures: 0 });
    await publisher.close();
  });

  it('keeps each message under maxBatchBytes', async () => {
    const { bus, sent } = fakeBus();
    const publisher = eventPublisher({ bus, logger: quiet, instanceId: 'r1', maxBatchBytes: 8 * 1024 });
    const events = Array.from({ length: 300 }, (_, i) => click(i, { utmContent: '\u00e9'.repeat(i % 50) }));
    for (const e of events) publisher.emit(e);
    await publisher.flush();
    expect(received(sent)).toEqual(events);
    expect(sent.length).toBeGreaterThan(10);
    for (const m of sent) expect(m.data.length).toBeLessThanOrEqual(8 * 1024);
    await publisher.close();
  });

  it('sends an event larger than maxBatchBytes on its own', async () => {
    const { bus, sent } = fakeBus();
    const publisher = eventPublisher({ bus, logger: quiet, instanceId: 'r1', maxBatchBytes: 1024 });
    const events = [click(1), click(2, { destination: `https://example.com/${'x'.repeat(2_000)}` }), click(3)];
    for (const e of events) publisher.emit(e);
    await publisher.flush();
    expect(received(sent)).toEqual(events);
    expect(sent.map((m) => received([m]).length)).toEqual([1, 1, 1]);
    await publisher.close();
  });

  it('flush waits until the bus has acknowledged the batch in flight', async () => {
    const { bus, sent } = fakeBus({ delayMs: 30 });
    const publisher = eventPublisher({ bus, logger: quiet, instanceId: 'r1' });
    for (let i = 0; i < 10; i++) publisher.emit(click(i));
    await new Promise((r) => setTimeout(r, 10)); // the batch is now in flight
    expect(publisher.stats().buffered).toBe(10);
    await publisher.flush();
    expect(received(sent)).toHaveLength(10);
    expect(publisher.stats()).toMatchObject({ published: 10, buffered: 0 });
    await publisher.close();
  });

  it('retries a failed batch with the same message id, losing nothing', async () => {
    const { bus, sent, attempts } = fakeBus({ fail: (attempt) => attempt <= 2 });
    const publisher = eventPublisher({ bus, logger: quiet, instanceId: 'r1', batchSize: 50 });
    const events = Array.from({ length: 120 }, (_, i) => click(i));
    for (const e of events) publisher.emit(e);
    await publisher.flush();
    expect(received(sent)).toEqual(events);
    expect(attempts.slice(0, 3)).toEqual(['r1-1', 'r1-1', 'r1-1']);
    expect(publisher.stats()).toMatchObject({ published: 120, buffered: 0, publishFailures: 2 });
    await publisher.close();
  });

  it('drops and counts events past maxBuffered, and flush gives up at its timeout', async () => {
    const { bus } = fakeBus({ fail: () => true });
    const publisher = eventPublisher({ bus, logger: quiet, instanceId: 'r1', maxBuffered: 100 });
    for (let i = 0; i < 150; i++) publisher.emit(click(i));
    const started = Date.now();
    await publisher.close(300);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(publisher.stats()).toMatchObject({ published: 0, buffered: 100, dropped: 50 });
  });

  it('stops retrying a failing bus once closed', async () => {
    const { bus, attempts } = fakeBus({ fail: () => true });
    const publisher = eventPublisher({ bus, logger: quiet, instanceId: 'r1', batchSize: 10 });
    for (let i = 0; i < 50; i++) publisher.emit(click(i));
    await publisher.close(100);
    const after = attempts.length;
    await new Promise((r) => setTimeout(r, 200));
    expect(attempts.length).toBeLessThanOrEqual(after + 1);
    expect(publisher.stats().buffered).toBe(50);
  });

  it('writes each event with its keys in declaration order whatever order the object has them in, the form the ingester reads without JSON.parse', async () => {
    const { bus, sent } = fakeBus();
    const publisher = eventPublisher({ bus, logger: quiet, instanceId: 'r1' });
    const event = click(1);
    const reversed = Object.fromEntries(Object.entries(event).reverse()) as ClickEvent;
    publisher.emit(reversed);
    await publisher.flush();
    const line = new TextDecoder().decode(sent[0]!.data).trimEnd();
    expect(Object.keys(JSON.parse(line) as object)).toEqual(Object.keys(clickEventFields));
    expect(line).toBe(JSON.stringify(event));
    await publisher.close();
  });

  it('never throws from emit: an event JSON cannot hold is dropped and counted', async () => {
    const { bus, sent } = fakeBus();
    const publisher = eventPublisher({ bus, logger: quiet, instanceId: 'r1' });
    publisher.emit(click(1));
    expect(() => publisher.emit(click(2, { ts: 10n as unknown as number }))).not.toThrow();
    publisher.emit(click(3));
    await publisher.flush();
    expect(received(sent).map((e) => e.ts % 10)).toEqual([1, 3]);
    expect(publisher.stats()).toMatchObject({ published: 2, dropped: 1 });
    await publisher.close();
  });

  it('lets a partial batch linger, and sends a full one at once', async () => {
    // On the fake clock: a loaded machine's timer lateness cannot blur "at once" and "after the linger".
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'Date'] });
    try {
      const { bus, sent } = fakeBus();
      const publisher = eventPublisher({ bus, logger: quiet, instanceId: 'r1', batchSize: 20, lingerMs: 60 });
      const started = Date.now();
      for (let i = 0; i < 5; i++) publisher.emit(click(i));
      await vi.advanceTimersByTimeAsync(20);
      expect(sent).toHaveLength(0);
      for (let i = 5; i < 20; i++) publisher.emit(click(i)); // now full: no waiting for the linger
      await vi.advanceTimersByTimeAsync(0);
      expect(sent).toHaveLength(1);
      expect(sent[0]!.at - started).toBe(20);
      for (let i = 20; i < 25; i++) publisher.emit(click(i));
      await vi.advanceTimersByTimeAsync(59);
      expect(sent).toHaveLength(1);
      await vi.advanceTimersByTimeAsync(1);
      expect(received(sent)).toHaveLength(25);
      expect(sent[1]!.at - sent[0]!.at).toBe(60);
      await publisher.close();
    } finally {
      vi.useRealTimers();
    }
  });
});
