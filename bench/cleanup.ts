/**
 * What an interrupted benchmark leaves behind otherwise (Ctrl-C, `kill <pid>`): temporary
 * directories, `lr_test_*` Postgres databases, nats-servers, child services and
 * bench:against's git worktree. Whatever a benchmark starts registers its teardown here
 * (onInterrupt); on SIGINT or SIGTERM, installInterruptCleanup runs them, newest first,
 * within CLEANUP_MS in all, then exits 130 or 143. A second signal (after
 * REPEAT_IGNORED_MS) exits at once.
 *
 * Child processes die with the bench process where they can: Node children preload
 * exit-with-parent.mjs (they stop themselves once re-parented), nats-server gets a
 * parent-death signal (shared/testing/nats-server.ts).
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startChildService, type ChildService } from '../shared/testing/child-service.ts';
import { destroyRunningTestNatsServers } from '../shared/testing/nats-server.ts';
import { dropOpenTestDatabases } from '../shared/testing/test-database.ts';

type Teardown = () => unknown;

/** The most the whole cleanup may take, and any one teardown. */
const CLEANUP_MS = 30_000;
const TEARDOWN_MS = 10_000;
/** How long a child process has to exit on SIGTERM before it gets SIGKILL. */
const KILL_GRACE_MS = 5_000;
/**
 * A repeat of the signal within this long is the same Ctrl-C: under `npm run`, npm
 * forwards the terminal's SIGINT to tsx, which relays it again, so one keypress can
 * arrive twice. Only a later one skips the cleanup.
 */
const REPEAT_IGNORED_MS = 2_000;

const teardowns = new Map<number, { label: string; teardown: Teardown }>();
let nextId = 0;
let interruptedBy: NodeJS.Signals | null = null;
let interruptedAt = 0;

/** Whether SIGINT or SIGTERM has arrived: a runner starts nothing new then, and the errors its teardown causes are expected. */
export function interrupted(): boolean {
  return interruptedBy !== null;
}

/** Registers `teardown` to run if the process is interrupted; returns a function that unregisters it. */
export function onInterrupt(label: string, teardown: Teardown): () => void {
  const id = nextId++;
  teardowns.set(id, { label, teardown });
  return () => void teardowns.delete(id);
}

/** A teardown that did not finish in its time. */
class TeardownTimeout extends Error {
  constructor(label: string, ms: number) {
    super(`${label}: not done after ${ms} ms`);
    this.name = 'TeardownTimeout';
  }
}

async function bounded(label: string, teardown: Teardown, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      Promise.resolve().then(teardown),
      new Promise((_, reject) => (timer = setTimeout(() => reject(new TeardownTimeout(label, ms)), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The newest registered teardown, taken off the registry. */
function takeNewest(): { label: string; teardown: Teardown } | undefined {
  const id = [...teardowns.keys()].at(-1);
  if (id === undefined) return undefined;
  const entry = teardowns.get(id)!;
  teardowns.delete(id);
  return entry;
}

async function runTeardowns(): Promise<void> {
  const deadline = Date.now() + CLEANUP_MS;
  const run = async ({ label, teardown }: { label: string; teardown: Teardown }) => {
    const left = deadline - Date.now();
    if (left <= 0) {
      console.error(`cleanup: out of time, left undone: ${label}`);
      return;
    }
    try {
      await bounded(label, teardown, Math.min(TEARDOWN_MS, left));
    } catch (err) {
      console.error(`cleanup: ${label}: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  // Newest first (a service before its data directory); taken one at a time, so what the
  // interrupted code still starts meanwhile is stopped too. Then whatever the shared test
  // helpers still hold: nats-servers and Postgres databases.
  for (let entry = takeNewest(); entry; entry = takeNewest()) await run(entry);
  await run({ label: 'nats-servers', teardown: destroyRunningTestNatsServers });
  await run({ label: 'test databases', teardown: dropOpenTestDatabases });
}

/** For bench/run.ts and bench/before-after.ts: on SIGINT/SIGTERM, the registered teardowns, then exit 130/143. */
export function installInterruptCleanup(): void {
  for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
    process.on(signal, () => {
      if (interruptedBy) {
        if (Date.now() - interruptedAt < REPEAT_IGNORED_MS) return;
        console.error(`\n${signal} again: exiting without finishing the cleanup`);
        process.exit(code);
      }
      interruptedBy = signal;
      interruptedAt = Date.now();
      console.error(`\n${signal}: stopping what the benchmark started (at most ${CLEANUP_MS / 1000} s; again to skip)`);
      void runTeardowns().finally(() => process.exit(code));
    });
  }
}

/** A fresh directory under the system's temporary directory, removed on interrupt (the caller removes it otherwise). */
export async function benchTempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  onInterrupt(`remove ${dir}`, () => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** NODE_OPTIONS for a Node child of the bench: the caller's, plus the preload that ends it with the bench process. */
export function childNodeOptions(): string {
  const preload = `--import=${new URL('./exit-with-parent.mjs', import.meta.url).href}`;
  return [process.env.NODE_OPTIONS, preload].filter(Boolean).join(' ');
}

/** SIGTERM, then SIGKILL after KILL_GRACE_MS; resolves once `child` has exited. */
export function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const kill = setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Registers `child` to be stopped on interrupt, until it exits. */
export function stopOnInterrupt(label: string, child: ChildProcess): void {
  const release = onInterrupt(`${label} (pid ${child.pid})`, () => stopChild(child));
  child.once('exit', release);
}

/**
 * startChildService for a benchmark: listening on loopback whatever HOST or ADMIN_HOST
 * the bench process inherited, ended with the bench process, stopped on interrupt.
 */
export function startBenchService(mainPath: string, env: Record<string, string>, options: { cwd?: string } = {}): ChildService {
  const service = startChildService(mainPath, { ...env, HOST: '127.0.0.1', ADMIN_HOST: '127.0.0.1', NODE_OPTIONS: childNodeOptions() }, options);
  const release = onInterrupt(`${mainPath} (pid ${service.pid})`, async () => {
    const kill = setTimeout(() => void service.kill('SIGKILL'), KILL_GRACE_MS);
    await service.kill();
    clearTimeout(kill);
  });
  void service.exited.then(release);
  return service;
}
