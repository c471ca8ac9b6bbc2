import { connect } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../logger.ts';
import { startTestNatsServer, type TestNatsServer } from '../testing/nats-server.ts';
import { EVENTS_STREAM, WEBHOOKS_STREAM } from './bus.ts';
import { connectNatsBus } from './nats-bus.ts';

const HOUR_NS = 3600 * 1e9;

/** NATS_EVENTS_RETENTION_HOURS on the events and webhook events streams, as services start with it or without it. */
describe('events retention', () => {
  let nats: TestNatsServer;
  beforeAll(async () => {
    nats = await startTestNatsServer();
  });
  afterAll(async () => {
    await nats?.destroy();
  });

  const startWith = async (eventsRetentionHours?: number) => {
    const bus = await connectNatsBus(nats.url, { name: 'retention-test', logger: createLogger('test', 'silent'), replicas: 1, eventsRetentionHours });
    await bus.close();
  };
  const maxAgeHours = async () => {
    const nc = await connect({ servers: nats.url });
    try {
      const jsm = await nc.jetstreamManager();
      return [(await jsm.streams.info(EVENTS_STREAM)).config.max_age / HOUR_NS, (await jsm.streams.info(WEBHOOKS_STREAM)).config.max_age / HOUR_NS];
    } finally {
      await nc.close();
    }
  };

  it('creates both streams with a week, takes the setting, and keeps it when a service starts without it', async () => {
    await startWith();
    expect(await maxAgeHours()).toEqual([168, 168]);
    await startWith(24);
    expect(await maxAgeHours()).toEqual([24, 24]);
    // A service started without the setting (an older one, or one not given it) undoes nothing.
    await startWith();
    expect(await maxAgeHours()).toEqual([24, 24]);
    await startWith(72);
    expect(await maxAgeHours()).toEqual([72, 72]);
  });
});
