import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChildService } from '../../shared/testing/child-service.ts';

/**
 * The compiled ingester (`npm run start:ingester`) started without LINKROUTE_SECRET: with
 * a secret of its own every real click would be dead-lettered as forged, so it refuses.
 */
describe('ingester start', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'linkroute-ingester-start-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('refuses to start without LINKROUTE_SECRET, saying why, and generates none', async () => {
    const ingester = startChildService(
      'services/ingester/main.ts',
      // Neither is reached: the secret is checked first.
      { NATS_URL: 'nats://127.0.0.1:4222', CLICKHOUSE_URL: 'http://127.0.0.1:1', INGEST_PORT: '0', DATA_DIR: dataDir, LINKROUTE_SECRET: '' },
      { compiled: true },
    );
    expect(await ingester.exited).toBe(1);
    expect(ingester.output).toContain('LINKROUTE_SECRET is required for a standalone ingester');
    expect(await readdir(dataDir)).toEqual([]);
  });
});
