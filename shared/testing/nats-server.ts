import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.ts';

/**
 * A private NATS server with JetStream for tests that stop and restart it, so
 * they never disturb the machine's shared server on 4222. Loopback only.
 */
export interface TestNatsServer {
  url: string;
  /** The running server's process id (0 while stopped): for benchmarks that account its CPU. */
  readonly pid: number;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops and removes its storage. */
  destroy(): Promise<void>;
}

const NATS_BINARY = '/usr/sbin/nats-server';

async function waitForPort(port: number, up: boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = tcpConnect(port, '127.0.0.1');
      socket.once('connect', () => (socket.destroy(), resolve(true)));
      socket.once('error', () => resolve(false));
    });
    if (open === up) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nats-server on ${port} did not come ${up ? 'up' : 'down'}`);
}

export async function startTestNatsServer(): Promise<TestNatsServer> {
  const port = await freePort();
  const storeDir = await mkdtemp(join(tmpdir(), 'linkroute-nats-'));
  let child: ChildProcess | null = null;

  const server: TestNatsServer = {
    url: `nats://127.0.0.1:${port}`,
    get pid() {
      return child?.pid ?? 0;
    },
    async start() {
      child = spawn(NATS_BINARY, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir], { stdio: 'ignore' });
      await waitForPort(port, true);
    },
    async stop() {
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child!.once('exit', r));
      child.kill('SIGTERM');
      await exited;
      child = null;
      await waitForPort(port, false);
    },
    async destroy() {
      await server.stop();
      await rm(storeDir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}
