/**
 * Stopping `npm start` loses no click: N browser clicks, then the stop a user or a
 * process manager gives (Ctrl-C to the terminal's process group, SIGTERM to the group,
 * SIGTERM to the node process alone, or to npm alone), then a restart on the same data: the link counts
 * exactly N more. A terminal's Ctrl-C reaches npm and node at once and npm relays it to
 * node again, so node sees the signal twice within milliseconds: still one graceful stop.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { realUserAgents } from '../../shared/request-facts/sample-user-agents.ts';
import { npmStart, signalGroup, stopNpmStart, type NpmStart } from '../../shared/testing/npm-start.ts';
import { seedEmbeddedPostgres } from '../../shared/testing/seed-embedded-postgres.ts';

const browsers = [realUserAgents.windowsChrome, realUserAgents.iphoneSafari, realUserAgents.androidPhoneChrome, realUserAgents.macSafari, realUserAgents.linuxFirefox];
const CLICKS = 300;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('npm start stops without losing a click', () => {
  let dataDir: string;
  let running: NpmStart;
  let key: string;
  let linkId: string;
  let answered = 0;

  const api = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(running.url + path, { ...init, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' } });
    return (await res.json()) as { data: any };
  };
  const counted = async () => (await api(`/links/${linkId}`)).data.clicks as number;

  /** `count` clicks, 16 at a time, each answered 302; each visitor a distinct address-less browser. */
  const click = async (count: number) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < count) {
          const i = next++;
          const res = await fetch(`${running.redirectUrl}/sig`, { redirect: 'manual', headers: { 'user-agent': browsers[i % browsers.length]! } });
          expect(res.status).toBe(302);
          answered++;
        }
      }),
    );
  };

  /** Clicks, stops as `stop` says, restarts on the same data and waits until every answered click is counted. */
  const clickStopRestart = async (stop: (started: NpmStart) => void) => {
    const before = await counted();
    const answeredBefore = answered;
    await click(CLICKS);
    const stopped = running;
    stop(stopped);
    await stopped.exited;
    const log = stopped.output();
    expect(log, log).toMatch(/"msg":"stopped"/);
    expect(log).not.toMatch(/exiting now|took too long|stopping failed/);
    running = await npmStart({ DATA_DIR: dataDir });
    const deadline = Date.now() + 20_000;
    let clicks = (await counted()) - before;
    while (clicks < CLICKS && Date.now() < deadline) {
      await sleep(250);
      clicks = (await counted()) - before;
    }
    await sleep(1_000); // a click counted twice would show by now
    clicks = (await counted()) - before;
    console.log(`signals test (${expect.getState().currentTestName}): sent ${CLICKS}, answered ${answered - answeredBefore} (302), counted ${clicks} after the restart`);
    expect(answered - answeredBefore).toBe(CLICKS);
    expect(clicks).toBe(CLICKS);
  };

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'linkroute-signals-'));
    await seedEmbeddedPostgres(dataDir);
    running = await npmStart({ DATA_DIR: dataDir });
    key = /export LINKROUTE_API_KEY=(lr_live_\w+)/.exec(running.output())![1]!;
    linkId = (await api('/links', { method: 'POST', body: JSON.stringify({ destinationUrl: 'https://example.com/sig', shortCode: 'sig' }) })).data.id;
    // Live in the redirector (HEAD answers like GET, never counts).
    while ((await fetch(`${running.redirectUrl}/sig`, { method: 'HEAD', redirect: 'manual' })).status !== 302) await sleep(20);
  }, 120_000);

  afterAll(async () => {
    if (running) await stopNpmStart(running);
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  }, 60_000);

  it('Ctrl-C: SIGINT to the whole process group', async () => {
    await clickStopRestart((started) => signalGroup(started.child, 'SIGINT'));
  }, 120_000);

  it('SIGTERM to the whole process group', async () => {
    await clickStopRestart((started) => signalGroup(started.child, 'SIGTERM'));
  }, 120_000);

  it('SIGTERM to the node process alone', async () => {
    await clickStopRestart((started) => process.kill(started.nodePid, 'SIGTERM'));
  }, 120_000);

  it('SIGTERM to npm alone (a supervisor that knows only the PID it started)', async () => {
    // The script execs node: a shell between them would take npm's relayed signal and
    // leave node serving, orphaned, on the ports the next start needs.
    await clickStopRestart((started) => started.child.kill('SIGTERM'));
  }, 120_000);

  it('a signal while starting: stopped once started, gracefully, and the data starts again', async () => {
    // Fresh data: the start opens the embedded stores and migrates them, then says the empty
    // snapshot bucket is queued, some way before it is started: the signal comes there.
    const early = await mkdtemp(join(tmpdir(), 'linkroute-signals-early-'));
    let child: ReturnType<typeof spawn> | undefined;
    try {
      const started = spawn(process.execPath, ['dist/services/all-in-one/main.js'], { env: { ...process.env, DATA_DIR: early, API_PORT: '0', REDIRECT_PORT: '0', ADMIN_PORT: '0' }, stdio: ['ignore', 'pipe', 'pipe'] });
      child = started;
      let log = '';
      let signalled = false;
      const exited = new Promise<number | null>((resolve) => started.once('exit', (code) => resolve(code)));
      const onOutput = (d: Buffer) => {
        log += d.toString();
        if (!signalled && log.includes('"msg":"snapshot bucket empty')) {
          signalled = true;
          started.kill('SIGINT');
        }
      };
      started.stdout.on('data', onOutput);
      started.stderr.on('data', onOutput);
      expect(await exited, log).toBe(0);
      expect(signalled, log).toBe(true);
      const said = log.indexOf('"msg":"stopping once started: the signal came while starting","signal":"SIGINT"');
      expect(said, log).toBeGreaterThan(log.indexOf('"msg":"snapshot bucket empty'));
      expect(log.indexOf('"msg":"stopped"'), log).toBeGreaterThan(log.indexOf('"msg":"linkroute started"'));
      expect(log).not.toMatch(/exiting now|took too long|stopping failed|failed to start/);
      // The first start made its workspace and showed the key before it stopped: both are there on the next start.
      const earlyKey = /export LINKROUTE_API_KEY=(lr_live_\w+)/.exec(log)?.[1];
      expect(earlyKey, log).toBeDefined();
      const again = await npmStart({ DATA_DIR: early });
      try {
        expect(again.output()).not.toContain('Created workspace');
        const res = await fetch(`${again.url}/links`, { headers: { authorization: `Bearer ${earlyKey!}` } });
        expect(res.status).toBe(200);
      } finally {
        await stopNpmStart(again);
      }
    } finally {
      // A failed expectation above leaves no process behind.
      if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await rm(early, { recursive: true, force: true });
    }
  }, 120_000);
});
