import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCommand } from '../../shared/testing/run-command.ts';
import { npmStart, stopNpmStart } from '../../shared/testing/npm-start.ts';
import { seedEmbeddedPostgres } from '../../shared/testing/seed-embedded-postgres.ts';

/** A port nothing listens on right now (the kernel's pick for port 0). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

describe('npm start on embedded defaults', () => {
  const cleanup: Array<() => Promise<void>> = [];
  afterAll(async () => {
    for (const fn of cleanup.reverse()) await fn();
  });

  it('prints a key once, serves the README walkthrough verbatim, lets the CLI work alongside, and keeps data across restarts', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'linkroute-start-'));
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }));

    const first = await npmStart({ DATA_DIR: dataDir });
    cleanup.push(() => stopNpmStart(first));
    const key = /export LINKROUTE_API_KEY=(lr_live_\w+)/.exec(first.output())?.[1];
    expect(key, first.output()).toBeDefined();
    expect(first.output()).toContain(`curl -s -H "Authorization: Bearer $LINKROUTE_API_KEY" ${first.url}/links`);

    // The README walkthrough, run as written; only the API address differs (the test's port is random).
    const readme = await readFile(new URL('../../README.md', import.meta.url), 'utf8');
    const walkthrough = /<!-- walkthrough:start -->\s*```sh\n([\s\S]*?)```\s*<!-- walkthrough:end -->/.exec(readme)?.[1];
    expect(walkthrough).toBeDefined();
    expect(walkthrough).toContain('API=http://localhost:3000\n');
    expect(walkthrough).toContain('REDIRECT=http://localhost:8080\n');
    const script = walkthrough!.replace('API=http://localhost:3000\n', `API=${first.url}\n`).replace('REDIRECT=http://localhost:8080\n', `REDIRECT=${first.redirectUrl}\n`);
    const ran = await runCommand('bash', ['-euo', 'pipefail', '-c', script], { env: { LINKROUTE_API_KEY: key! } });
    expect(ran.code, ran.stderr + ran.stdout).toBe(0);
    expect(ran.stdout).toContain('"shortCode": "spring"');
    expect(ran.stdout).toContain('"rules": []');
    expect(ran.stdout).toContain('302 https://example.com/sale');
    expect(ran.stdout).toMatch(/"clicks": 1,\s+"uniqueClicks": 1,\s+"lastClickedAt": "20/);
    expect(ran.stdout).toContain('"deleted": true');
    expect(ran.stdout).toContain('"code": "ALREADY_DELETED"');
    expect(ran.stdout).not.toMatch(/"code": "(INTERNAL_ERROR|VALIDATION_ERROR|UNAUTHORIZED)"/);

    // The CLI attaches to the running embedded database.
    const cli = await runCommand('npm', ['run', '-s', 'cli', '--', 'workspace', 'create', '--name', 'Second', '--plan', 'pro', '--json'], { env: { DATA_DIR: dataDir } });
    expect(cli.code, cli.stderr).toBe(0);
    const second = JSON.parse(cli.stdout) as { apiKey: string };
    const res = await fetch(`${first.url}/links`, { headers: { authorization: `Bearer ${second.apiKey}` } });
    expect(res.status).toBe(200);

    await stopNpmStart(first);
    const again = await npmStart({ DATA_DIR: dataDir });
    cleanup.push(() => stopNpmStart(again));
    expect(again.output()).not.toContain('LINKROUTE_API_KEY=');
    const links = await fetch(`${again.url}/links?q=spring`, { headers: { authorization: `Bearer ${key}` } });
    const body = (await links.json()) as { data: Array<{ shortCode: string; title: string }> };
    expect(body.data.map((l) => l.shortCode)).toEqual(['spring-sale']);
    await stopNpmStart(again);
  }, 150_000);

  it('puts shortUrl and QR codes on REDIRECT_PORT when REDIRECT_BASE_URL is unset', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'linkroute-port-'));
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
    await seedEmbeddedPostgres(dataDir); // a first start on empty data is the walkthrough's
    const redirectPort = await freePort();
    const started = await npmStart({ DATA_DIR: dataDir, REDIRECT_PORT: String(redirectPort) });
    cleanup.push(() => stopNpmStart(started));
    expect(started.redirectUrl).toBe(`http://127.0.0.1:${redirectPort}`);
    const key = /export LINKROUTE_API_KEY=(lr_live_\w+)/.exec(started.output())![1]!;
    const post = async (path: string, body: object) => {
      const res = await fetch(`${started.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(res.status).toBe(201);
      return ((await res.json()) as { data: Record<string, string> }).data;
    };
    const link = await post('/links', { destinationUrl: 'https://example.com/port', shortCode: 'port' });
    expect(link.shortUrl).toBe(`http://localhost:${redirectPort}/port`);
    expect((await post('/qr', { linkId: link.id })).encodedUrl).toBe(`http://localhost:${redirectPort}/port?qr=1`);
    // The short URL answers where it says.
    expect((await fetch(link.shortUrl!, { redirect: 'manual', headers: { 'user-agent': 'Mozilla/5.0 Firefox/128.0' } })).status).toBe(302);

    // Every part's metrics on one admin port, on loopback; none on the public ports.
    expect(started.adminUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const metrics = await (await fetch(`${started.adminUrl}/metrics`)).text();
    for (const name of ['linkroute_api_http_requests_total', 'linkroute_redirector_requests_total', 'linkroute_ingester_rows_inserted_total', 'linkroute_webhooks_attempts_total']) expect(metrics).toContain(`# TYPE ${name} `);
    expect(metrics.match(/^# TYPE process_resident_memory_bytes /gm)).toHaveLength(1);
    expect(await (await fetch(`${started.adminUrl}/ready`)).json()).toMatchObject({ status: 'ready', checks: { snapshot: 'ok' } });
    for (const base of [started.url, started.redirectUrl]) expect((await fetch(`${base}/metrics`)).status, base).toBe(404);
    expect((await fetch(`${started.redirectUrl}/ready`)).status).toBe(404);
    await stopNpmStart(started);
  }, 120_000);

  it('keeps a reached clicksLimit across a restart on the in-process bus, for browsers and bots alike, counting clicks from before a limit was set', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'linkroute-limit-'));
    cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
    await seedEmbeddedPostgres(dataDir);
    const first = await npmStart({ DATA_DIR: dataDir });
    cleanup.push(() => stopNpmStart(first));
    const key = /export LINKROUTE_API_KEY=(lr_live_\w+)/.exec(first.output())![1]!;
    const created = await fetch(`${first.url}/links`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ destinationUrl: 'https://example.com/limited', shortCode: 'limited', clicksLimit: 2 }),
    });
    expect(created.status).toBe(201);
    const visit = async (base: string, userAgent: string) => (await fetch(`${base}/limited`, { redirect: 'manual', headers: { 'user-agent': userAgent } })).status;
    const browser = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
    expect([await visit(first.redirectUrl, browser), await visit(first.redirectUrl, browser)]).toEqual([302, 302]);
    expect([await visit(first.redirectUrl, browser), await visit(first.redirectUrl, 'curl/8.5.0')]).toEqual([410, 410]);

    // A limit set on a link that already has clicks counts them (Shlink's maxVisits does):
    // 3 clicks, then a limit of 4 leaves one.
    const api = (method: string, path: string, body?: object) =>
      fetch(`${first.url}${path}`, { method, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: body && JSON.stringify(body) });
    const later = (await (await api('POST', '/links', { destinationUrl: 'https://example.com/later', shortCode: 'later' })).json()) as { data: { id: string } };
    const visitLater = async (base: string) => (await fetch(`${base}/later`, { redirect: 'manual', headers: { 'user-agent': browser } })).status;
    expect([await visitLater(first.redirectUrl), await visitLater(first.redirectUrl), await visitLater(first.redirectUrl)]).toEqual([302, 302, 302]);
    const deadline = Date.now() + 30_000;
    while (((await (await api('GET', `/links/${later.data.id}`)).json()) as { data: { clicks: number } }).data.clicks < 3) {
      if (Date.now() > deadline) throw new Error('3 clicks never reached the link counters');
      await new Promise((r) => setTimeout(r, 300));
    }
    expect((await api('PATCH', `/links/${later.data.id}`, { clicksLimit: 4 })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 300)); // the limit reaches the redirector
    expect([await visitLater(first.redirectUrl), await visitLater(first.redirectUrl)]).toEqual([302, 410]);
    await stopNpmStart(first);

    const again = await npmStart({ DATA_DIR: dataDir });
    cleanup.push(() => stopNpmStart(again));
    expect([await visit(again.redirectUrl, 'curl/8.5.0'), await visit(again.redirectUrl, browser)]).toEqual([410, 410]);
    expect(await visitLater(again.redirectUrl)).toBe(410);
    await stopNpmStart(again);
  }, 180_000);
});
