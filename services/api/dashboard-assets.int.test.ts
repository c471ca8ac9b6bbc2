import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../shared/testing/test-database.ts';
import { createLogger } from '../../shared/logger.ts';
import { createApiApp } from './app.ts';
import { loadApiConfig } from './config.ts';
import { listen, type RunningServer } from './server.ts';

const index = '<!doctype html><title>dash</title><script type="module" src="/dashboard/assets/app-1a2b.js"></script>';
const script = 'console.log("dashboard");'.repeat(20);

describe('the dashboard served by the API', () => {
  let db: TestDatabase;
  let built: RunningServer;
  let unbuilt: RunningServer;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'linkroute-dashboard-'));
    await mkdir(join(dir, 'assets'));
    await writeFile(join(dir, 'index.html'), index);
    await writeFile(join(dir, 'assets', 'app-1a2b.js'), script);
    await writeFile(join(dir, 'assets', 'app-1a2b.js.gz'), gzipSync(script));
    db = await createTestDatabase('pglite');
    const start = (DASHBOARD_DIR: string) =>
      listen(createApiApp({ sql: db.sql, config: loadApiConfig({ DASHBOARD_DIR }), logger: createLogger('t', 'silent') }), 0, '127.0.0.1');
    built = await start(dir);
    unbuilt = await start(join(dir, 'nowhere'));
  });
  afterAll(async () => {
    await built?.close();
    await unbuilt?.close();
    await db?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('/ redirects to /dashboard/', async () => {
    const res = await fetch(`${built.url}/`, { redirect: 'manual' });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/dashboard/');
  });

  it('answers index.html for the app and every client-side route, never cached stale, with a strict CSP', async () => {
    for (const path of ['/dashboard', '/dashboard/', '/dashboard/links', '/dashboard/links/link_x/edit?q=1']) {
      const res = await fetch(built.url + path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('cache-control')).toBe('no-cache');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(await res.text()).toBe(index);
    }
  });

  it('serves hashed assets as immutable, gzip when accepted, plain otherwise', async () => {
    const gz = await fetch(`${built.url}/dashboard/assets/app-1a2b.js`, { headers: { 'accept-encoding': 'gzip' } });
    expect(gz.status).toBe(200);
    expect(gz.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(gz.headers.get('cache-control')).toContain('immutable');
    expect(gz.headers.get('content-encoding')).toBe('gzip');
    expect(await gz.text()).toBe(script); // fetch decodes it
    const plain = await fetch(`${built.url}/dashboard/assets/app-1a2b.js`, { headers: { 'accept-encoding': 'identity' } });
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect(await plain.text()).toBe(script);
  });

  it('a missing file is a 404 in the error envelope, and no path escapes the build folder', async () => {
    for (const path of ['/dashboard/assets/gone-9z9z.js', '/dashboard/%2e%2e/package.json', '/dashboard/..%2f..%2fpackage.json', '/dashboard/favicon.ico']) {
      const res = await fetch(built.url + path);
      expect(res.status, path).toBe(404);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
    }
  });

  it('only GET and HEAD: other methods are a 405', async () => {
    const res = await fetch(`${built.url}/dashboard/links`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(405);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('METHOD_NOT_ALLOWED');
    const head = await fetch(`${built.url}/dashboard/`, { method: 'HEAD' });
    expect(head.status).toBe(200);
  });

  it('when not built, says how to build it (503), and the API itself still answers', async () => {
    const res = await fetch(`${unbuilt.url}/dashboard/`);
    expect(res.status).toBe(503);
    expect(await res.text()).toContain('npm run build:dashboard');
    expect((await fetch(`${unbuilt.url}/health`)).status).toBe(200);
  });
});
