/**
 * A lower bound for the redirect benchmark: bare uWebSockets.js plus only the per-click
 * work DESIGN requires of any implementation, each step done the cheapest way this code
 * base has: a Map lookup of the code among BENCH_LINK_COUNT links, the click id with its
 * MAC (it is the event id), the hashed visitor id (no cookie on the requests, so also a
 * Set-Cookie), and one click event to NATS JetStream through the production publisher.
 *
 * Left out on purpose, so this stays a floor: routing rules, user-agent parsing, geo-IP,
 * referrer and utm parsing, counters. The event carries those fields empty (null).
 * If this server cannot reach a budget stated against the bare server, no redirector
 * that also does the rest can. Prints `READY <port>`; `EVENTS <n>` on SIGTERM.
 */
import uWS from 'uWebSockets.js';
import { randomBytes } from 'node:crypto';
import { ClickIdIssuer } from '../../shared/click-id.ts';
import { connectNatsBus } from '../../shared/bus/nats-bus.ts';
import { createLogger } from '../../shared/logger.ts';
import { VisitorHasher, visitorCookie } from '../../shared/visitor.ts';
import { UserAgentWorkCache } from '../../services/redirector/serving/user-agent-work.ts';
import { eventPublisher } from '../../services/redirector/events/event-publisher.ts';
import { forwardedAddress } from '../../services/redirector/serving/client-address.ts';
import { NO_STORE } from '../../services/redirector/pages/responses.ts';
import { BENCH_LINK_COUNT, benchLink, benchShortCode } from './bench-links.ts';
import { floorEvent, type FloorLink } from '../floor-breakdown.ts';

const natsUrl = process.env.NATS_URL;
if (!natsUrl) throw new Error('NATS_URL is required');
const logger = createLogger('bench-click-floor', 'error');
const bus = await connectNatsBus(natsUrl, { replicas: 1, name: 'bench-click-floor', logger });
const publisher = eventPublisher({ bus, logger, instanceId: 'bench-floor' });
const secret = randomBytes(32);

const links = new Map<string, FloorLink>();
for (let i = 0; i < BENCH_LINK_COUNT; i++) {
  const link = benchLink(i);
  links.set(benchShortCode(i), { id: link.id, workspaceId: link.workspaceId, campaignId: link.campaignId, destination: link.defaultDestination });
}

const userAgents = new UserAgentWorkCache();
let events = 0;
// As the redirector does (serve-link.ts): key state and scratch buffers of its own.
const clickIds = new ClickIdIssuer(secret);
const visitors = new VisitorHasher(secret);
const app = uWS.App();
app.get('/:code', (res, req) => {
  const link = links.get(req.getParameter(0) ?? '');
  if (link === undefined) {
    res.writeStatus('404 Not Found').end();
    return;
  }
  const userAgent = req.getHeader('user-agent');
  const ip = forwardedAddress(req.getHeader('x-forwarded-for'), 1);
  const now = Date.now();
  // Digests each distinct User-Agent once, in the redirector's cache (its UA parse runs
  // once per distinct UA too: 20 in the whole run, so a request pays only the hit).
  const visitorId = visitors.hash(ip, userAgents.get(userAgent).digest, now);
  const clickId = clickIds.issue(link.id, now);
  res.writeStatus('302 Found').writeHeader('Location', link.destination).writeHeader('Cache-Control', NO_STORE).writeHeader('Set-Cookie', visitorCookie(visitorId)).end();
  events++;
  publisher.emit(floorEvent(link, clickId, visitorId, now));
});
app.listen('127.0.0.1', 0, (socket) => {
  if (socket === false) {
    console.error('click-floor: could not listen');
    process.exit(1);
  }
  process.stdout.write(`READY ${uWS.us_socket_local_port(socket as unknown as uWS.us_socket)}\n`);
  process.once('SIGTERM', async () => {
    uWS.us_listen_socket_close(socket);
    await publisher.close(5_000);
    await bus.close();
    process.stdout.write(`EVENTS ${events}\n`, () => process.exit(0));
  });
});
