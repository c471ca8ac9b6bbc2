/**
 * linkroute on a three-node NATS JetStream cluster (loopback), every stream, KV bucket and
 * object store at 3 replicas (NATS_STREAM_REPLICAS=3, NATS_URL listing the three servers).
 * While clicks flow: the node leading the click stream is SIGKILLed and brought back, then
 * the other two are restarted in turn (SIGTERM, as a rolling upgrade does). Redirectors,
 * ingesters and the webhooks sender carry on against the other two each time, a link
 * changed while a node is down reaches every redirector and its link.updated event the
 * subscribed endpoint, and every click is counted once.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect, type JetStreamManager, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNatsCluster, type TestNatsCluster, type TestNatsServer } from '../shared/testing/nats-server.ts';
import { eventually, expectCountedOnce, sleep, startProcessStack, type ProcessStack } from './process-stack.ts';

/**
 * Paced to flow for up to ~100 s, through the SIGKILL and both restarts (done at ~22 s when
 * measured), and ended once they are: the stream's length is the faults', not a guess at it.
 */
const MAX_CLICKS = 20_000;
const PACE_MS = 40;
/** Clicks stored while a node is down before it comes back: ingestion carried on without it. */
const STORED_WHILE_DOWN = 150;

/** Every stream has its three replicas current again (a node brought back has caught up). */
async function allCurrent(jsm: JetStreamManager): Promise<void> {
  await eventually(async () => {
    for await (const s of jsm.streams.list()) {
      const followers = s.cluster?.replicas ?? [];
      if (followers.length !== s.config.num_replicas - 1 || followers.some((r) => !r.current)) throw new Error(`${s.config.name}: followers ${JSON.stringify(followers)}`);
    }
  }, 60_000, 250);
}

describe('on a NATS cluster of three', () => {
  let cluster: TestNatsCluster;
  let stack: ProcessStack;
  let nc: NatsConnection;
  let receiver: Server;
  /** Destinations of the link.updated events the subscribed endpoint received. */
  const updated: string[] = [];

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        try {
          const event = JSON.parse(body) as { type: string; data: { destinationUrl: string } };
          if (event.type === 'link.updated') updated.push(event.data.destinationUrl);
          res.writeHead(204).end();
        } catch (err) {
          if (!(err instanceof SyntaxError)) throw err;
          res.writeHead(400).end();
        }
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    cluster = await startTestNatsCluster(3);
    // A webhooks sender starts last: its connection, too, must keep every stream at 3.
    stack = await startProcessStack({
      natsUrl: cluster.url,
      redirectors: 2,
      ingesters: 2,
      webhookSenders: 1,
      env: { NATS_STREAM_REPLICAS: '3', WEBHOOKS_ALLOW_PRIVATE_TARGETS: 'true' },
    });
    nc = await connect({ servers: cluster.url.split(','), maxReconnectAttempts: -1 });
  }, 240_000);

  afterAll(async () => {
    await nc?.close();
    await stack?.stop();
    await cluster?.destroy();
    await new Promise((resolve) => receiver?.close(resolve));
  }, 60_000);

  it('keeps every stream at 3 replicas; a node SIGKILLed mid-stream, then a rolling restart, lose and double nothing, and each change made meanwhile reaches every redirector and the webhook endpoint', async () => {
    const jsm = await nc.jetstreamManager();
    const hook = await stack.call('POST', '/webhooks', { url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`, events: ['link.updated'] });
    expect(hook.status).toBe(201);
    const linkId = await stack.createLink('cluster');
    // The compacted snapshot is written right after the API seeds the bucket.
    const streams = ['LINKROUTE_EVENTS', 'LINKROUTE_WEBHOOKS', 'KV_linkroute_snapshot', 'KV_linkroute_click_counts', 'KV_linkroute_leases', 'OBJ_linkroute_snapshot_compacted'];
    await eventually(async () => {
      for (const name of streams) expect((await jsm.streams.info(name)).config.num_replicas, name).toBe(3);
    }, 30_000);

    /**
     * With `node` down: changes the link and waits until both redirectors serve the change
     * and more clicks are stored; then brings the node back and waits until it caught up.
     */
    const changeWhileDown = async (node: TestNatsServer, destinationUrl: string) => {
      const storedBefore = await stack.storedCount(linkId);
      const patched = await stack.call('PATCH', `/links/${linkId}`, { destinationUrl });
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
      for (const url of stack.redirectorUrls) {
        await eventually(async () => {
          const res = await fetch(`${url}/cluster`, { method: 'HEAD', redirect: 'manual' });
          expect(res.headers.get('location')).toBe(destinationUrl);
        }, 30_000, 50);
      }
      await eventually(async () => expect(await stack.storedCount(linkId)).toBeGreaterThanOrEqual(storedBefore + STORED_WHILE_DOWN), 60_000, 100);
      await node.start();
      await allCurrent(jsm);
    };

    const faultsDone = new AbortController();
    const clicking = stack.click('cluster', MAX_CLICKS, { paceMs: PACE_MS, until: faultsDone.signal });
    let clicked = false;
    void clicking.then(() => (clicked = true));
    while ((await stack.storedCount(linkId)) < STORED_WHILE_DOWN) await sleep(20);
    // The node leading the click stream: its loss moves the stream's leadership.
    // Asked again on a timeout: under load a JetStream API request may go unanswered for its 5 s.
    const leader = await eventually(async () => (await jsm.streams.info('LINKROUTE_EVENTS')).cluster?.leader);
    const victim = cluster.nodes[Number(/(\d+)$/.exec(leader ?? '')?.[1] ?? 1) - 1]!;
    await victim.kill('SIGKILL');
    await changeWhileDown(victim, 'https://example.com/while-down');

    // A rolling restart of the other two, one at a time, as an upgrade does it.
    const destinations = ['https://example.com/while-down'];
    for (const node of cluster.nodes.filter((n) => n !== victim)) {
      await node.stop();
      const destinationUrl = `https://example.com/restarting-${node.port}`;
      destinations.push(destinationUrl);
      await changeWhileDown(node, destinationUrl);
    }

    // Every server went down and came back while clicks were flowing.
    expect(clicked).toBe(false);
    faultsDone.abort();
    const { sent, answered } = await clicking;
    await stack.drained(120_000);
    expectCountedOnce('nats cluster', sent, answered, await stack.figures(linkId), stack.output());
    // At least once each (a delivery retried after a lost acknowledgement comes twice).
    await eventually(async () => expect([...new Set(updated)].sort()).toEqual([...destinations].sort()), 60_000, 200);
  }, 600_000);
});
