import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'nats';
import { parseNatsUrl } from '../config/nats-env.ts';
import { createLogger } from '../logger.ts';
import { startTestNatsServer, type TestNatsServer } from '../testing/nats-server.ts';
import { createSelfSignedCert, type SelfSignedCert } from '../testing/self-signed-cert.ts';
import type { NatsTarget } from '../config/nats-env.ts';
import { connectNatsBus } from './nats-bus.ts';

/**
 * NATS that requires credentials (user and password, or a token) and TLS: a client
 * without them is refused; the bus, given them the way NATS_URL, NATS_TLS_CA carry them,
 * connects and moves events. Private servers on loopback.
 */
const logger = createLogger('nats-auth-test', 'silent');
const encoder = new TextEncoder();

/** An event published through one bus connection and read back through another. */
async function roundTrip(target: NatsTarget | string, tag: string): Promise<string[]> {
  const publisher = await connectNatsBus(target, { replicas: 1, name: `auth-${tag}-pub`, logger });
  const reader = await connectNatsBus(target, { replicas: 1, name: `auth-${tag}-read`, logger });
  try {
    await publisher.publishEvent(`linkroute.events.auth-${tag}`, encoder.encode(`hello ${tag}`), `auth-${tag}-1`);
    const consumer = await reader.eventConsumer(`auth-${tag}`, `linkroute.events.auth-${tag}`);
    const messages = await consumer.fetch(10, 1_000);
    for (const m of messages) m.ack();
    return messages.map((m) => new TextDecoder().decode(m.data));
  } finally {
    await publisher.close();
    await reader.close();
  }
}

/** A plain nats.js client (as anyone who reaches the port could run) with these options. */
const plainClient = (options: Parameters<typeof connect>[0]) => connect({ ...options, maxReconnectAttempts: 0, reconnect: false, timeout: 5_000 }).then((nc) => nc.close().then(() => 'connected'));

describe('NATS with user and password', () => {
  let nats: TestNatsServer;
  beforeAll(async () => {
    nats = await startTestNatsServer({ config: 'authorization { users = [ { user: "linkroute", password: "s3cr@t:pw" } ] }' });
  });
  afterAll(async () => {
    await nats?.destroy();
  });

  it('refuses a client without credentials or with a wrong password', async () => {
    await expect(plainClient({ servers: nats.url })).rejects.toThrow(/authorization/i);
    await expect(connectNatsBus(`nats://linkroute:wrong@127.0.0.1:${nats.port}`, { replicas: 1, name: 'auth-wrong', logger })).rejects.toThrow(/authorization/i);
  });

  it('connects with the credentials in NATS_URL, also as one seed of a cluster list', async () => {
    expect(await roundTrip(`nats://linkroute:s3cr%40t%3Apw@127.0.0.1:${nats.port}`, 'user')).toEqual(['hello user']);
    expect(await roundTrip(`nats://127.0.0.1:${nats.port}, nats://linkroute:s3cr%40t%3Apw@127.0.0.1:${nats.port}`, 'list')).toEqual(['hello list']);
  });
});

describe('NATS with a token', () => {
  let nats: TestNatsServer;
  beforeAll(async () => {
    nats = await startTestNatsServer({ config: 'authorization { token: "t0ken-linkroute" }' });
  });
  afterAll(async () => {
    await nats?.destroy();
  });

  it('refuses a client without the token, connects with it', async () => {
    await expect(plainClient({ servers: nats.url })).rejects.toThrow(/authorization/i);
    await expect(plainClient({ servers: nats.url, token: 'guess' })).rejects.toThrow(/authorization/i);
    expect(await roundTrip(`nats://t0ken-linkroute@127.0.0.1:${nats.port}`, 'token')).toEqual(['hello token']);
  });
});

describe('NATS with TLS (a self-signed certificate) and a password', () => {
  let nats: TestNatsServer;
  let cert: SelfSignedCert;
  beforeAll(async () => {
    cert = await createSelfSignedCert();
    nats = await startTestNatsServer({
      config: `tls { cert_file: "${cert.certFile}", key_file: "${cert.keyFile}" }\nauthorization { users = [ { user: "linkroute", password: "pw" } ] }`,
    });
  });
  afterAll(async () => {
    await nats?.destroy();
    await cert?.remove();
  });

  it('verifies the certificate: refused without the CA that signed it, connects with NATS_TLS_CA', async () => {
    // By name: nats.js checks the certificate against the server's host name (to an IP address it gives no name, and Node then checks for "localhost").
    const url = `tls://linkroute:pw@localhost:${nats.port}`;
    await expect(connectNatsBus(url, { replicas: 1, name: 'tls-no-ca', logger })).rejects.toThrow(/self[- ]signed|certificate/i);
    expect(await roundTrip({ ...parseNatsUrl(url), tlsCaFile: cert.certFile }, 'tls')).toEqual(['hello tls']);
    // The CA but no password: still refused.
    await expect(connectNatsBus({ ...parseNatsUrl(`tls://localhost:${nats.port}`), tlsCaFile: cert.certFile }, { replicas: 1, name: 'tls-no-pw', logger })).rejects.toThrow(/authorization/i);
  });
});
