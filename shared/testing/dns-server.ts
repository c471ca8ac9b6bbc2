import dns2 from 'dns2';

export interface DnsServer {
  /** `ip:port`, as DNS_SERVERS takes it. */
  address: string;
  close(): void;
}

/** A real DNS server on loopback answers TXT queries from `records`. */
export function startDnsServer(records: Map<string, string[]>): Promise<DnsServer> {
  const { Packet } = dns2;
  const server = dns2.createServer({
    udp: true,
    handle: (request, send) => {
      const response = Packet.createResponseFromRequest(request);
      const question = request.questions[0]!;
      const values = records.get(question.name.toLowerCase());
      // dns2's type definitions lack RCODE and plain answer objects; the runtime has both.
      if (!values) response.header.rcode = (Packet as unknown as { RCODE: { NXDOMAIN: number } }).RCODE.NXDOMAIN;
      for (const data of values ?? []) response.answers.push({ name: question.name, type: Packet.TYPE.TXT, class: Packet.CLASS.IN, ttl: 1, data } as never);
      send(response);
    },
  });
  return new Promise((resolve) => {
    server.on('listening', () => {
      const { port } = server.addresses().udp!;
      resolve({ address: `127.0.0.1:${port}`, close: () => void server.close() });
    });
    server.listen({ udp: { port: 0, address: '127.0.0.1' } });
  });
}
