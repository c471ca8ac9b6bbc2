import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChildService } from '../../shared/testing/child-service.ts';

/**
 * `npm start` (compiled) with NATS_URL and without LINKROUTE_SECRET: on a shared NATS its
 * ingester would dead-letter the other redirectors' clicks as forged under a secret of its
 * own, so it refuses, as a standalone API with NATS does.
 */
describe('npm start with NATS_URL', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'linkroute-all-in-one-secret-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('refuses to start without LINKROUTE_SECRET, saying why, and generates none', async () => {
    const started = startChildService(
      'services/all-in-one/main.ts',
      // Neither is reached: the secret is checked first.
      { NATS_URL: 'nats://127.0.0.1:4222', DATABASE_URL: 'postgres://127.0.0.1:1/none', CLICKHOUSE_URL: 'http://127.0.0.1:1', API_PORT: '0', REDIRECT_PORT: '0', ADMIN_PORT: '0', DATA_DIR: dataDir, LINKROUTE_SECRET: '' },
      { compiled: true },
    );
    expect(await started.exited).toBe(1);
    expect(started.output).toContain('LINKROUTE_SECRET is required for `npm start` with NATS_URL set');
    expect(await readdir(dataDir)).toEqual([]);
  });
});
