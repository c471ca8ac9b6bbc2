import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from './free-port.ts';

describe('freePort', () => {
  it('gives a port that can be bound, below the range outgoing connections take theirs from', async () => {
    const [ephemeralLow] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    const ports = await Promise.all(Array.from({ length: 10 }, () => freePort()));
    for (const port of ports) {
      expect(port).toBeLessThan(ephemeralLow!);
      const server = createServer();
      await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('never hands out one port twice, though each is free again once picked', async () => {
    // Sequential picks: each trial bind is closed before the next pick, as when a test picks
    // a cluster's ports before starting any of its servers.
    const ports: number[] = [];
    for (let i = 0; i < 300; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(ports.length);
  });

  it("picks from its vitest fork's own slice of the range, so forks running at once never pick alike", async () => {
    const [ephemeralLow] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    const pool = Number(process.env.VITEST_POOL_ID);
    expect(pool).toBeGreaterThanOrEqual(1);
    const size = Math.floor((ephemeralLow! - 20_000) / 4);
    const low = 20_000 + ((pool - 1) % 4) * size;
    for (let i = 0; i < 50; i++) {
      const port = await freePort();
      expect(port).toBeGreaterThanOrEqual(low);
      expect(port).toBeLessThan(low + size);
    }
  });
});
