import { connect } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../config/config-error.ts';
import { createLogger } from '../logger.ts';
import { startTestNatsServer, type TestNatsServer } from '../testing/nats-server.ts';
import { EVENTS_STREAM } from './bus.ts';
import { connectNatsBus } from './nats-bus.ts';

/** NATS_STREAM_REPLICAS above 1 against a server of its own that is not clustered. */
describe('stream replicas on a single NATS server', () => {
  let nats: TestNatsServer;
  beforeAll(async () => {
    nats = await startTestNatsServer();
  });
  afterAll(async () => {
    await nats?.destroy();
  });

  it('refuses replicas > 1 with a ConfigError naming the setting, before creating or changing any stream', async () => {
    const refused = await connectNatsBus(nats.url, { name: 'replicas-test', logger: createLogger('test', 'silent'), replicas: 3 }).then(
      () => null,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(ConfigError);
    expect((refused as ConfigError).details).toEqual([{ path: 'NATS_STREAM_REPLICAS', message: 'must be 1 on a single NATS server, not 3' }]);
    const nc = await connect({ servers: nats.url });
    try {
      const streams = await (await nc.jetstreamManager()).streams.names().next();
      expect(streams).not.toContain(EVENTS_STREAM);
    } finally {
      await nc.close();
    }
    // 1 is fine there.
    const bus = await connectNatsBus(nats.url, { name: 'replicas-test', logger: createLogger('test', 'silent'), replicas: 1 });
    await bus.close();
  });
});
