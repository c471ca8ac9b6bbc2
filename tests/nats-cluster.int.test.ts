/**
 * linkroute on a three-node NATS JetStream cluster (loopback), every stream, KV bucket and
 * object store at 3 replicas (NATS_STREAM_REPLICAS=3, NATS_URL listing the three servers).
 * The node leading the click stream is SIGKILLed while clicks flow and brought back later:
 * redirectors and the ingester carry on against the other two, a link changed while the
 * node is down reaches every redirector, and every click is counted once.
 */
import { connect, type NatsConnection } from 'nats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNatsCluster, type TestNatsCluster } from '../shared/testing/nats-server.ts';
import { eventually, expectCountedOnce, sleep, startProcessStack, type ProcessStack } from './process-stack.ts';

const CLICKS = 3_000;

describe('on a NATS cluster of three', () => {
  let cluster: TestNatsCluster;
  let stack: ProcessStack;
  let nc: NatsConnection;

  beforeAll(async () => {
    cluster = await startTestNatsCluster(3);
    // A webhooks sender starts last: its connection, too, must keep every stream at 3.
    stack = await startProcessStack({ natsUrl: cluster.url, redirectors: 2, ingesters: 2, webhookSenders: 1, env: { NATS_STREAM_REPLICAS: '3' } });
    nc = await connect({ servers: cluster.url.split(','), maxReconnectAttempts: -1 });
  }, 240_000);

  afterAll(async () => {
    await nc?.close();
    await stack?.stop();
    await cluster?.destroy();
  }, 60_000);

  it('keeps every stream at 3 replicas; a node SIGKILLed mid-stream loses and doubles nothing, and a change made while it is down reaches every redirector', async () => {
    const jsm = await nc.jetstreamManager();
    const linkId = await stack.createLink('cluster');
    // The compacted snapshot is written right after the API seeds the bucket.
    const streams = ['LINKROUTE_EVENTS', 'LINKROUTE_WEBHOOKS', 'KV_linkroute_snapshot', 'KV_linkroute_click_counts', 'KV_linkroute_leases', 'OBJ_linkroute_snapshot_compacted'];
    await eventually(async () => {
      for (const name of streams) expect((await jsm.streams.info(name)).config.num_replicas, name).toBe(3);
    }, 30_000);

    const clicking = stack.click('cluster', CLICKS, { paceMs: 20 });
    while ((await stack.storedCount(linkId)) < CLICKS * 0.3) await sleep(20);
    // The node leading the click stream: its loss moves the stream's leadership.
    // Asked again on a timeout: under load a JetStream API request may go unanswered for its 5 s.
    const leader = await eventually(async () => (await jsm.streams.info('LINKROUTE_EVENTS')).cluster?.leader);
    const victim = cluster.nodes[Number(/(\d+)$/.exec(leader ?? '')?.[1] ?? 1) - 1]!;
    await victim.kill('SIGKILL');

    // A change made while the node is down reaches both redirectors.
    const patched = await stack.call('PATCH', `/links/${linkId}`, { destinationUrl: 'https://example.com/while-down' });
    expect(patched.status).toBe(200);
    for (const url of stack.redirectorUrls) {
      await eventually(async () => {
        const res = await fetch(`${url}/cluster`, { method: 'HEAD', redirect: 'manual' });
        expect(res.headers.get('location')).toBe('https://example.com/while-down');
      }, 30_000, 50);
    }
    while ((await stack.storedCount(linkId)) < CLICKS * 0.6) await sleep(20);
    await victim.start();

    const answered = await clicking;
    await stack.drained(120_000);
    expectCountedOnce('nats cluster', CLICKS, answered, await stack.figures(linkId), stack.output());
  }, 300_000);
});
