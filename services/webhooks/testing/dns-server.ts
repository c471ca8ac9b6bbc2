import { createSocket } from 'node:dgram';
import dnsPacket from 'dns-packet';

/**
 * What a test DNS server answers for a name (lower case, no trailing dot): its A and
 * AAAA records (`hang`: that question is never answered), after `delayMs`; or `hang`
 * (no question is answered), or `servfail`. Any other name is NXDOMAIN.
 */
export type TestZone = Record<string, { A?: string[] | 'hang'; AAAA?: string[] | 'hang'; delayMs?: number } | 'hang' | 'servfail'>;

export interface TestDnsServer {
  /** `127.0.0.1:port`, for Resolver.setServers. */
  server: string;
  /** Every question received, as `name type`. */
  asked: string[];
  close(): Promise<void>;
}

const NXDOMAIN = 3;
const SERVFAIL = 2;

/** A DNS server on a loopback UDP port answering from `zone` (dns-packet encodes the answers). */
export async function startTestDnsServer(zone: TestZone): Promise<TestDnsServer> {
  const socket = createSocket('udp4');
  const asked: string[] = [];
  const delayed = new Set<NodeJS.Timeout>();
  socket.on('message', (message, from) => {
    const query = dnsPacket.decode(message);
    const question = query.questions?.[0];
    if (!question) return;
    const name = question.name.toLowerCase().replace(/\.$/, '');
    asked.push(`${name} ${question.type}`);
    const entry = zone[name];
    if (entry === 'hang') return;
    const type = question.type === 'A' || question.type === 'AAAA' ? question.type : null;
    const records = typeof entry === 'object' && type ? (entry[type] ?? []) : [];
    if (records === 'hang') return;
    const rcode = entry === undefined ? NXDOMAIN : entry === 'servfail' ? SERVFAIL : 0;
    const response = dnsPacket.encode({
      type: 'response',
      id: query.id,
      flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | rcode,
      questions: [question],
      answers: records.map((data) => ({ type: type!, name: question.name, ttl: 60, class: 'IN' as const, data })),
    });
    const send = () => socket.send(response, from.port, from.address);
    if (typeof entry === 'object' && entry.delayMs) {
      const timer = setTimeout(() => (delayed.delete(timer), send()), entry.delayMs);
      delayed.add(timer);
    } else {
      send();
    }
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return {
    server: `127.0.0.1:${socket.address().port}`,
    asked,
    close: () => {
      for (const timer of delayed) clearTimeout(timer);
      return new Promise<void>((resolve) => socket.close(() => resolve()));
    },
  };
}
