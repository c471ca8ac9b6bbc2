import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/**
 * handleShutdown in a process of its own, whose stop takes 3 s and would leave 7 clicks
 * unstored if cut short: a signal repeated at once is the same graceful stop; a second one
 * given later forces the exit and says what it dropped.
 */
function startStoppable(): { signal(s: NodeJS.Signals): void; ready: Promise<void>; result: Promise<{ code: number | null; log: string }> } {
  const script = `import { handleShutdown } from ${JSON.stringify(new URL('./shutdown.ts', import.meta.url).href)};
import { createLogger } from ${JSON.stringify(new URL('./logger.ts', import.meta.url).href)};
const logger = createLogger('shutdown-test', 'info');
handleShutdown(logger, () => new Promise((r) => setTimeout(r, 3_000)), { unfinished: () => ({ clicksDropped: 7 }) });
setInterval(() => {}, 1_000);
process.stdout.write('ready\\n');`;
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

describe('handleShutdown', () => {
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
});
