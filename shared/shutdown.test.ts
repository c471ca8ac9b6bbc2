import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { SHUTDOWN_TIMEOUT_MS } from './shutdown.ts';

/**
 * watchShutdownSignals in a process of its own, whose stop takes 3 s and would leave 7
 * clicks unstored if cut short: a signal repeated at once is the same graceful stop; a
 * second one given later forces the exit and says what it dropped. With `startMs`, the
 * process says `ready` as it starts, then takes that long to start (or fails to, with
 * `failStart`): a signal meanwhile stops it once started, running its stop; without it,
 * `ready` comes once started.
 */
function startStoppable(startMs = 0, failStart = false): { signal(s: NodeJS.Signals): void; ready: Promise<void>; result: Promise<{ code: number | null; log: string }> } {
  const script = `import { watchShutdownSignals } from ${JSON.stringify(new URL('./shutdown.ts', import.meta.url).href)};
import { createLogger } from ${JSON.stringify(new URL('./logger.ts', import.meta.url).href)};
const logger = createLogger('shutdown-test', 'info');
const signals = watchShutdownSignals(logger);
const start = async () => {
  await new Promise((r) => setTimeout(r, ${startMs}));
  if (${JSON.stringify(failStart)}) throw new Error('start failed');
  logger.info('started');
  signals.started(async (msLeft) => {
    logger.info('stop ran', { msLeft });
    await new Promise((r) => setTimeout(r, 3_000));
  }, { unfinished: () => ({ clicksDropped: 7 }) });
};
// Without a start to signal into, 'ready' comes once started.
if (${startMs} > 0) process.stdout.write('ready\\n');
try {
  await start();
} catch (err) {
  logger.error('failed to start', { message: err.message });
  process.exit(1);
}
if (${startMs} === 0) process.stdout.write('ready\\n');
setInterval(() => {}, 1_000);`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  let markReady!: () => void;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  child.stdout.on('data', (d: Buffer) => {
    log += d.toString();
    if (log.includes('ready\n')) markReady();
  });
  child.stderr.on('data', (d: Buffer) => (log += d.toString()));
  const result = new Promise<{ code: number | null; log: string }>((resolve) => child.on('exit', (code) => resolve({ code, log })));
  return { signal: (s) => child.kill(s), ready, result };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('watchShutdownSignals', () => {
  it('takes a signal repeated within a second (a relayed Ctrl-C) as the same graceful stop', async () => {
    const p = startStoppable();
    await p.ready;
    p.signal('SIGINT');
    await sleep(30);
    p.signal('SIGINT');
    await sleep(30);
    p.signal('SIGTERM');
    const { code, log } = await p.result;
    expect(code, log).toBe(0);
    expect(log).toContain('"msg":"signal repeated while stopping; still stopping gracefully"');
    expect(log).toContain('"msg":"stopped"');
    expect(log).not.toContain('exiting now');
  }, 20_000);

  it('exits at once on a second signal given later, logging the clicks it drops', async () => {
    const p = startStoppable();
    await p.ready;
    p.signal('SIGINT');
    await sleep(1_300);
    p.signal('SIGINT');
    const { code, log } = await p.result;
    expect(code, log).toBe(1);
    expect(log).toMatch(/"msg":"second signal while stopping; exiting now","signal":"SIGINT","clicksDropped":7/);
    expect(log).not.toContain('"msg":"stopped"');
  }, 20_000);

  it('a signal while starting stops the service once started: said at once, its stop run, exit 0', async () => {
    const p = startStoppable(1_500);
    await p.ready;
    p.signal('SIGTERM');
    const { code, log } = await p.result;
    expect(code, log).toBe(0);
    const order = ['"msg":"stopping once started: the signal came while starting","signal":"SIGTERM"', '"msg":"started"', '"msg":"stopping","signalWhileStarting":true', '"msg":"stop ran"', '"msg":"stopped"'];
    const at = order.map((line) => log.indexOf(line));
    expect(at.every((i) => i >= 0), log).toBe(true);
    expect(at, log).toEqual([...at].sort((x, y) => x - y));
    // The stop's time counts from the signal: the 1.5 s of starting are gone from it.
    const msLeft = Number(/"msg":"stop ran","msLeft":(\d+)/.exec(log)![1]);
    expect(msLeft).toBeLessThanOrEqual(SHUTDOWN_TIMEOUT_MS - 1_400);
    expect(msLeft).toBeGreaterThan(SHUTDOWN_TIMEOUT_MS - 10_000);
  }, 20_000);

  it('a signal while starting, then a second one later: exits at once, before its stop', async () => {
    const p = startStoppable(3_000);
    await p.ready;
    p.signal('SIGINT');
    await sleep(1_300);
    p.signal('SIGINT');
    const { code, log } = await p.result;
    expect(code, log).toBe(1);
    expect(log).toContain('"msg":"stopping once started: the signal came while starting","signal":"SIGINT"');
    expect(log).toMatch(/"msg":"second signal while stopping; exiting now","signal":"SIGINT"/);
    expect(log).not.toContain('"msg":"started"');
  }, 20_000);

  it('a signal while starting, then the start fails: exit 1, said as a failed start', async () => {
    const p = startStoppable(1_000, true);
    await p.ready;
    p.signal('SIGTERM');
    const { code, log } = await p.result;
    expect(code, log).toBe(1);
    expect(log).toContain('"msg":"stopping once started: the signal came while starting"');
    expect(log).toContain('"msg":"failed to start"');
    expect(log).not.toContain('"msg":"stopped"');
  }, 20_000);
});
