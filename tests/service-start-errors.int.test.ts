import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compiledPath, startChildService } from '../shared/testing/child-service.ts';
import { freePort } from '../shared/testing/free-port.ts';

const SECRET = 'start-errors-secret-of-at-least-32-characters';

/**
 * What an operator sees when a service cannot start (the compiled services, as `npm run
 * start:*` runs them): one JSON log line that names the setting and why, exit 1, and no
 * stack trace (the fix is in the environment, not in our code).
 */
describe('services refusing to start', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'linkroute-start-errors-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  async function refusal(main: string, env: Record<string, string>): Promise<Record<string, unknown>> {
    const child = startChildService(main, { DATA_DIR: dataDir, LOG_LEVEL: 'info', ...env }, { compiled: true });
    expect(await child.exited, child.output).toBe(1);
    const lines = child.output.trim().split('\n');
    expect(lines, child.output).toHaveLength(1);
    const line = JSON.parse(lines[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 'error' });
    return line;
  }

  it('a malformed setting: one JSON line naming it, no stack', async () => {
    const cases: Array<[string, Record<string, string>, string]> = [
      ['services/api/main.ts', { API_PORT: 'abc' }, 'API_PORT'],
      ['services/api/main.ts', { API_PORT: '13003', ADMIN_PORT: '13003' }, 'ADMIN_PORT'],
      ['services/redirector/main.ts', { NATS_URL: 'http://127.0.0.1:4222', LINKROUTE_SECRET: SECRET }, 'NATS_URL'],
      ['services/ingester/main.ts', { NATS_URL: 'nats://127.0.0.1:4222', INGEST_MAX_MESSAGES: '0', LINKROUTE_SECRET: SECRET }, 'INGEST_MAX_MESSAGES'],
      ['services/clickhouse-embedded/main.ts', { CLICKHOUSE_PORT: '99999' }, 'CLICKHOUSE_PORT'],
    ];
    for (const [main, env, setting] of cases) {
      const line = await refusal(main, env);
      expect(line, main).toMatchObject({ code: 'CONFIG_INVALID', settings: [expect.objectContaining({ path: setting })] });
      expect(String(line.error), main).toContain(setting);
      expect(line, main).not.toHaveProperty('stack');
    }
  });

  it('an API serving redirectors (NATS_URL) without their secret refuses, generating none', async () => {
    const line = await refusal('services/api/main.ts', { NATS_URL: 'nats://127.0.0.1:4222', LINKROUTE_SECRET: '' });
    expect(line).toMatchObject({ code: 'CONFIG_INVALID' });
    expect(String(line.error)).toContain('LINKROUTE_SECRET is required for an API serving redirectors');
    expect(await readdir(dataDir)).toEqual([]);
  });

  it('NATS not answering at start: the address is named', async () => {
    const port = await freePort(); // nothing listens there
    const line = await refusal('services/redirector/main.ts', { NATS_URL: `nats://127.0.0.1:${port}`, LINKROUTE_SECRET: SECRET, REDIRECT_PORT: '0', ADMIN_PORT: '0' });
    expect(String(line.error)).toContain(`cannot connect to NATS at nats://127.0.0.1:${port} (NATS_URL): CONNECTION_REFUSED`);
  });

  it('the CLI: a malformed setting is one line and exit code 2', () => {
    const cli = spawnSync(process.execPath, [compiledPath('services/cli/main.ts'), 'key', 'list'], { env: { ...process.env, DATABASE_URL: 'notaurl' }, encoding: 'utf8' });
    expect(cli.status).toBe(2);
    expect(cli.stderr).toBe('error: Invalid configuration: DATABASE_URL: Invalid URL\n');
  });
});
