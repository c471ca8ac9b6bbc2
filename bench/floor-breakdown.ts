/**
 * Where the redirect floor server's CPU above bare uWS goes (issue 15): the per-click
 * work DESIGN requires, each piece timed on its own in this process, set beside the
 * end-to-end differences between servers of the same run, so the next step on redirect
 * speed starts from numbers. Pieces: the two MACs (click id, visitor hash), the
 * Set-Cookie, the event's serialization, its publish into the NATS client (batching,
 * nats.js, socket writes, acks) and what the nats-server spends on it.
 */
import { randomBytes } from 'node:crypto';
import { setImmediate as nextTick } from 'node:timers/promises';
import { connectNatsBus } from '../shared/bus/nats-bus.ts';
import { createClickId } from '../shared/click-id.ts';
import { createLogger } from '../shared/logger.ts';
import { clickEventJson, type ClickEvent } from '../shared/schemas/click-event.ts';
import { realUserAgents } from '../shared/request-facts/sample-user-agents.ts';
import { sampleClickEvent } from '../shared/testing/click-event-fixture.ts';
import { hashedVisitorIdFromDigest, userAgentDigest, visitorCookie } from '../shared/visitor.ts';
import { eventPublisher } from '../services/redirector/events/event-publisher.ts';
import { processCpuSeconds } from './process-cpu.ts';
import { benchLink } from './servers/bench-links.ts';
import type { Row } from './suite.ts';
import { nsPerCall } from './timing.ts';

export interface FloorLink {
  id: string;
  workspaceId: string;
  campaignId: string;
  destination: string;
}

/** What the floor server's events share: no UA, geo-IP, rules or query facts (a desktop click from a link). */
const FLOOR_EVENT = sampleClickEvent({ kind: 'click', deviceClass: 'desktop', source: 'link', bot: false });

/** The floor server's event (bench/servers/click-floor.ts): only what it knows without UA, geo-IP, rules or query. */
export function floorEvent(link: FloorLink, clickId: string, visitorId: string, ts: number): ClickEvent {
  // A copy of one template keeps the declaration's key order, at about a literal's cost.
  return { ...FLOOR_EVENT, id: clickId, ts, workspaceId: link.workspaceId, linkId: link.id, campaignId: link.campaignId, visitorId, destination: link.destination };
}

export interface PieceCosts {
  cookieNs: number;
  serializeNs: number;
  /** Emit + publish per event in this process, serialization included. */
  publishTotalNs: number;
  natsServerNs: number;
}

const PUBLISH_EVENTS = 200_000;
const EMIT_CHUNK = 500;

/**
 * The in-process cost per click of the Set-Cookie's value, the serialization and the
 * publish (the MACs: the suite's own click id and visitor hash timings); publishes
 * PUBLISH_EVENTS events to the private nats-server.
 */
export async function measureFloorPieces(natsUrl: string, natsPid: number): Promise<PieceCosts> {
  const secret = randomBytes(32);
  const digests = Object.values(realUserAgents).map((ua) => userAgentDigest(ua));
  const linkId = 'link_BENCH00000000000012345';
  const now = Date.now();
  const visitorId = hashedVisitorIdFromDigest(secret, '81.2.69.142', digests[0]!, now);
  const cookieNs = nsPerCall(() => visitorCookie(visitorId));
  const clickId = createClickId(secret, linkId, now);
  const events = Array.from({ length: 256 }, (_, i) => {
    const link = benchLink(i);
    return floorEvent({ id: link.id, workspaceId: link.workspaceId, campaignId: link.campaignId, destination: link.defaultDestination }, clickId, visitorId, now + i);
  });
  const serializeNs = nsPerCall((i) => clickEventJson(events[i & 255]!));

  const logger = createLogger('bench-floor-breakdown', 'error');
  const bus = await connectNatsBus(natsUrl, { replicas: 1, name: 'bench-floor-breakdown', logger });
  const publisher = eventPublisher({ bus, logger, instanceId: `bench-breakdown-${randomBytes(4).toString('hex')}` });
  try {
    // Warm: the first batches grow buffers and compile the path.
    for (let i = 0; i < 5_000; i++) publisher.emit(events[i & 255]!);
    await publisher.flush(30_000);
    const natsBefore = await processCpuSeconds(natsPid);
    const before = process.cpuUsage();
    for (let i = 0; i < PUBLISH_EVENTS; i += EMIT_CHUNK) {
      for (let k = i; k < i + EMIT_CHUNK; k++) publisher.emit(events[k & 255]!);
      await nextTick();
    }
    await publisher.flush(60_000);
    const used = process.cpuUsage(before);
    const nats = (await processCpuSeconds(natsPid)) - natsBefore;
    if (publisher.stats().published < PUBLISH_EVENTS) throw new Error(`published ${publisher.stats().published} of ${PUBLISH_EVENTS}`);
    return { cookieNs, serializeNs, publishTotalNs: ((used.user + used.system) * 1000) / PUBLISH_EVENTS, natsServerNs: (nats * 1e9) / PUBLISH_EVENTS };
  } finally {
    await publisher.close(5_000);
    await bus.close();
  }
}

/** CPU per request (µs) of the servers of the same run. */
export interface EndToEnd {
  bare: number;
  bareWithCookie: number;
  floor: number;
  /** nats-server CPU per request while the floor was measured. */
  floorNatsServer: number;
}

/** `macsNs`: ClickIdIssuer.issue + VisitorHasher.hash, in process. */
export function floorBreakdownRows(pieces: PieceCosts, macsNs: number, e2e: EndToEnd): Row[] {
  const above = (e2e.floor - e2e.bare) * 1000;
  const cookieOnWire = (e2e.bareWithCookie - e2e.bare) * 1000;
  const publishNs = Math.max(0, pieces.publishTotalNs - pieces.serializeNs);
  const share = (ns: number) => Number(((ns / above) * 100).toFixed(0));
  const row = (name: string, micro: number | null, endToEnd: number | null, shareNs: number | null, how: string): Row => ({
    name,
    'in-process ns/click': micro === null ? '' : Math.round(micro),
    'end-to-end ns/req': endToEnd === null ? '' : Math.round(endToEnd),
    '% of floor above bare': shareNs === null ? '' : share(shareNs),
    'how measured': how,
  });
  const cookie = pieces.cookieNs + cookieOnWire;
  const explained = macsNs + cookie + pieces.serializeNs + publishNs;
  return [
    row('floor server above bare uWS (end to end)', null, above, above, 'server CPU/req: floor - bare, medians of the rounds'),
    row('MACs: click id + visitor hash', macsNs, null, macsNs, 'ClickIdIssuer.issue + VisitorHasher.hash (UA digest cached)'),
    row('Set-Cookie', pieces.cookieNs, cookieOnWire, cookie, 'visitorCookie() in process; on the wire: bare + a same-length Set-Cookie - bare'),
    row('event serialization', pieces.serializeNs, null, pieces.serializeNs, 'the event publisher\'s JSON writer (from the declaration) on the floor\'s event'),
    row('publish into the NATS client', publishNs, null, publishNs, `event publisher emit + batches through nats.js to the server, acks (${PUBLISH_EVENTS.toLocaleString('en-US')} events, process CPU) - serialization`),
    row('rest (request, lookup, GC, ...)', null, above - explained, above - explained, 'floor above bare - the pieces above'),
    row('nats-server (its own process)', pieces.natsServerNs, e2e.floorNatsServer * 1000, null, 'its CPU per event in the publish run; per request in the floor rounds (not in the floor server\'s CPU)'),
  ];
}
