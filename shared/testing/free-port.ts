import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * Ports are picked below the kernel's ephemeral range: a port from bind(0) lies inside it,
 * where every outgoing connection (fetch, postgres.js, nats.js, of any test running beside
 * this one) also takes its local port, so one could take it in the second or so before the
 * child process told to use it binds it (a CI run failed so: EADDRINUSE). Below the range,
 * only another listener picking the same port at random can collide, which the trial bind
 * catches unless it happens in that same second (about 1 in 10,000 per pair of picks).
 */
const PICK_FLOOR = 20_000;

function ephemeralStart(): number | null {
  try {
    const [low] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    return Number.isInteger(low) && low! > PICK_FLOOR + 1_000 ? low! : null;
  } catch (err) {
    // Not Linux: no such file; bind(0) is all there is.
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

const ceiling = ephemeralStart();

/**
 * Test files run in several vitest forks at once; each fork picks from a slice of the
 * range of its own (by VITEST_POOL_ID, 1 to the number of forks), so a port one fork has
 * handed out, and its child not yet bound, is never picked by another. Outside vitest
 * (benches, which run alone) the whole range.
 */
const SLICES = 4;
const slice = (() => {
  const pool = Number(process.env.VITEST_POOL_ID);
  if (ceiling === null || !Number.isInteger(pool) || pool < 1) return { low: PICK_FLOOR, size: (ceiling ?? PICK_FLOOR) - PICK_FLOOR };
  const size = Math.floor((ceiling - PICK_FLOOR) / SLICES);
  return { low: PICK_FLOOR + ((pool - 1) % SLICES) * size, size };
})();

/**
 * Ports this process has handed out: none is handed out twice. A port is free again the
 * moment its trial bind closes, so without this, two picks made before their children
 * bind (a stack's ports, a NATS cluster's client and route ports) could get the same
 * one, and the second child fail with EADDRINUSE (a CI run did: 1 in ~10,000 per pair of
 * picks, over hundreds of picks a run). Other test processes pick from other slices.
 */
const handedOut = new Set<number>();

/** Binds `port` (0: any) on loopback and closes it again: the port it got, or null when it was taken. */
function tryPort(port: number): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (err: NodeJS.ErrnoException) => (err.code === 'EADDRINUSE' || err.code === 'EACCES' ? resolve(null) : reject(err)));
    server.listen(port, '127.0.0.1', () => {
      const { port: bound } = server.address() as { port: number };
      server.close(() => resolve(bound));
    });
  });
}

/** A loopback port free right now (for child processes that must be told their port). */
export async function freePort(): Promise<number> {
  if (ceiling !== null) {
    for (let attempt = 0; attempt < 50; attempt++) {
      const pick = slice.low + Math.floor(Math.random() * slice.size);
      if (handedOut.has(pick)) continue;
      const port = await tryPort(pick);
      if (port !== null) return handOut(port);
    }
  }
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await tryPort(0);
    if (port === null) break;
    if (!handedOut.has(port)) return handOut(port);
  }
  throw new Error('no free loopback port');
}

function handOut(port: number): number {
  handedOut.add(port);
  return port;
}
