import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCommand } from '../../shared/testing/run-command.ts';
import { startTestApi, type TestApi } from '../api/testing/api-harness.ts';

/** Each test runs the CLI 5-9 times through npm: a few seconds each on a loaded 2-core machine. */
const CLI_TEST_TIMEOUT_MS = 120_000;

/** The real CLI as a child process, against the same Postgres database as an in-process API. */
describe('command-line tool on postgres', () => {
  let api: TestApi;
  const cli = (...args: string[]) => runCommand('npm', ['run', '-s', 'cli', '--', ...args], { env: { DATABASE_URL: api.db.url } });

  beforeAll(async () => {
    // A revoke must show at once here: no key cache (auth.int.test.ts holds the cache to its bound).
    api = await startTestApi('postgres', { env: { API_KEY_CACHE_MS: '0' } });
  });
  afterAll(() => api?.close());

  it('workspace create --json prints a working key; key create/list/revoke manage keys', async () => {
    const created = await cli('workspace', 'create', '--name', 'Acme', '--plan', 'pro', '--json');
    expect(created.code, created.stderr).toBe(0);
    const { workspaceId, apiKey } = JSON.parse(created.stdout) as { workspaceId: string; apiKey: string };
    expect(workspaceId).toMatch(/^ws_/);
    expect(apiKey).toMatch(/^lr_live_/);
    expect((await api.request('GET', '/links', { key: apiKey })).status).toBe(200);
    const [ws] = await api.db.sql`SELECT plan FROM workspaces WHERE id = ${workspaceId}`;
    expect(ws!.plan).toBe('pro');

    const readOnly = await cli('key', 'create', '--workspace', workspaceId, '--scopes', 'links:read', '--json');
    expect(readOnly.code, readOnly.stderr).toBe(0);
    const issued = JSON.parse(readOnly.stdout) as { keyId: string; apiKey: string; scopes: string[] };
    expect(issued.scopes).toEqual(['links:read']);
    expect((await api.request('GET', '/links', { key: issued.apiKey })).status).toBe(200);
    expect((await api.request('POST', '/links', { key: issued.apiKey, body: { destinationUrl: 'https://e.com' } })).status).toBe(403);

    const listed = await cli('key', 'list', '--workspace', workspaceId, '--json');
    expect((JSON.parse(listed.stdout) as unknown[]).length).toBe(2);
    expect(listed.stdout).not.toContain(issued.apiKey);

    const revoked = await cli('key', 'revoke', issued.keyId, '--json');
    expect(revoked.code, revoked.stderr).toBe(0);
    const first = JSON.parse(revoked.stdout) as { keyId: string; revokedAt: string; alreadyRevoked: boolean };
    expect(first).toMatchObject({ keyId: issued.keyId, alreadyRevoked: false });
    expect((await api.request('GET', '/links', { key: issued.apiKey })).status).toBe(401);
    // Again: nothing changes, and it says so (the first revocation's time stays).
    const again = await cli('key', 'revoke', issued.keyId, '--json');
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ ...first, alreadyRevoked: true });
    const human = await cli('key', 'revoke', issued.keyId);
    expect(human.stdout).toContain(`${issued.keyId} (`);
    expect(human.stdout).toContain(`was already revoked at ${first.revokedAt}; nothing changed`);
  }, CLI_TEST_TIMEOUT_MS);

  it('human output and clear errors for bad usage', async () => {
    const human = await cli('workspace', 'create', '--name', 'Beta', '--plan', 'starter');
    expect(human.stdout).toMatch(/^Workspace ws_\S+ \(Beta, starter\)\nAPI key \(shown once\): lr_live_/);
    for (const args of [
      ['workspace', 'create', '--plan', 'pro'],
      ['workspace', 'create', '--name', 'X', '--plan', 'gold'],
      ['key', 'create'],
      ['key', 'create', '--workspace', 'ws_missing'],
      ['key', 'create', '--workspace', 'ws_missing', '--scopes', 'everything'],
      ['key', 'revoke', 'key_missing'],
      ['frobnicate'],
      ['workspace', 'create', '--name', 'X', '--bogus'],
    ]) {
      const res = await cli(...args);
      expect(res.code, args.join(' ')).not.toBe(0);
      expect(res.stderr, args.join(' ')).toMatch(/^error: /);
    }
  }, CLI_TEST_TIMEOUT_MS);
});
