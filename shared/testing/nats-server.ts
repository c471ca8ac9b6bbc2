import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect as tcpConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'nats';
import { freePort } from './free-port.ts';

/**
 * A private NATS server with JetStream for tests that stop and restart it, so
 * they never disturb the machine's shared server on 4222. Loopback only.
 */
export interface TestNatsServer {
  url: string;
  /** Its client port on 127.0.0.1 (for URLs with credentials or tls://). */
  port: number;
  /** The running server's process id (0 while stopped): for benchmarks that account its CPU. */
  readonly pid: number;
  stop(): Promise<void>;
  /** Kills it with `signal` (SIGKILL: a crash, nothing flushed or said goodbye) and waits for the port to close. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  start(): Promise<void>;
  /** Stops and removes its storage. */
  destroy(): Promise<void>;
}

const NATS_BINARY = '/usr/sbin/nats-server';
/**
 * util-linux's setpriv, to start nats-server with a parent-death signal: a Go binary
 * cannot watch its parent, and a test or benchmark process that is SIGKILLed would
 * otherwise leave it running. It execs nats-server, so the pid stays the server's.
 */
const SETPRIV = '/usr/bin/setpriv';
const withParentDeathSignal = (command: string, args: string[]): [string, string[]] =>
  existsSync(SETPRIV) ? [SETPRIV, ['--pdeathsig', 'SIGTERM', '--', command, ...args]] : [command, args];

/** Servers started and not yet destroyed, for destroyRunningTestNatsServers. */
const running = new Set<TestNatsServer>();

/**
 * Destroys every server this process started and has not destroyed yet: what an
 * interrupted benchmark (bench/cleanup.ts) runs before it exits.
 */
export async function destroyRunningTestNatsServers(): Promise<void> {
  await Promise.all([...running].map((server) => server.destroy()));
}

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

/**
 * `config`: a nats-server configuration (authorization, tls, ...) written beside its
 * store and given with `-c`; address, port and JetStream still come from the command line.
 */
export async function startTestNatsServer(options: { config?: string } = {}): Promise<TestNatsServer> {
  const port = await freePort();
  let configArgs: string[] = [];
  const server = await natsServerProcess(port, () => configArgs);
  if (options.config !== undefined) {
    const configFile = join(server.storeDir, 'nats-server.conf');
    await writeFile(configFile, options.config);
    configArgs = ['-c', configFile];
  }
  await server.start();
  return server;
}

/** `nats-server` on `port` with its own store, started by start(); `extraArgs` is asked at each start. */
async function natsServerProcess(port: number, extraArgs: () => string[]): Promise<TestNatsServer & { storeDir: string }> {
  const storeDir = await mkdtemp(join(tmpdir(), 'linkroute-nats-'));
  let child: ChildProcess | null = null;

  const server: TestNatsServer & { storeDir: string } = {
    url: `nats://127.0.0.1:${port}`,
    port,
    storeDir,
    get pid() {
      return child?.pid ?? 0;
    },
    async start() {
      const [command, args] = withParentDeathSignal(NATS_BINARY, ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', storeDir, ...extraArgs()]);
      child = spawn(command, args, { stdio: 'ignore' });
      await waitForPort(port, true);
    },
    stop: () => server.kill('SIGTERM'),
    async kill(signal = 'SIGKILL') {
      if (!child || child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child!.once('exit', r));
      child.kill(signal);
      await exited;
      child = null;
      await waitForPort(port, false);
    },
    async destroy() {
      await server.stop();
      await rm(storeDir, { recursive: true, force: true });
      running.delete(server);
    },
  };
  running.add(server);
  return server;
}

/** Private nats-servers forming one JetStream cluster on loopback, for tests that kill a node. */
export interface TestNatsCluster {
  /** Every node's client URL, comma-separated, as NATS_URL takes them. */
  url: string;
  nodes: TestNatsServer[];
  destroy(): Promise<void>;
}

export async function startTestNatsCluster(size = 3): Promise<TestNatsCluster> {
  const clientPorts = await Promise.all(Array.from({ length: size }, () => freePort()));
  const routePorts = await Promise.all(Array.from({ length: size }, () => freePort()));
  const routes = routePorts.map((p) => `nats://127.0.0.1:${p}`).join(',');
  const nodes = await Promise.all(
    clientPorts.map((port, i) =>
      natsServerProcess(port, () => ['-n', `linkroute-test-${i + 1}`, '--cluster_name', 'linkroute-test', '--cluster', `nats://127.0.0.1:${routePorts[i]}`, '--routes', routes]),
    ),
  );
  await Promise.all(nodes.map((node) => node.start()));
  // JetStream answers once the nodes have elected a meta leader.
  const nc = await connect({ servers: nodes.map((node) => node.url) });
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        await (await nc.jetstreamManager()).getAccountInfo();
        break;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  } finally {
    await nc.close();
  }
  return {
    url: nodes.map((node) => node.url).join(','),
    nodes,
    async destroy() {
      await Promise.all(nodes.map((node) => node.destroy()));
    },
  };
}
