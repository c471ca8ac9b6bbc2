import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChildService } from '../../shared/testing/child-service.ts';

/**
 * The compiled webhooks sender (`npm run start:webhooks`) started without LINKROUTE_SECRET: with
 * a secret of its own it could unseal no endpoint's signing secret, so it refuses.
 */
describe('webhooks sender start', () => {
  let dataDir: string;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'linkroute-webhooks-start-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  it('refuses to start without LINKROUTE_SECRET, saying why, and generates none', async () => {
    const sender = startChildService(
      'services/webhooks/main.ts',
      // Neither is reached: the secret is checked first.
      { NATS_URL: 'nats://127.0.0.1:4222', DATABASE_URL: 'postgres://127.0.0.1:1/none', WEBHOOKS_PORT: '0', DATA_DIR: dataDir, LINKROUTE_SECRET: '' },
      { compiled: true },
    );
    expect(await sender.exited).toBe(1);
    expect(sender.output).toContain('LINKROUTE_SECRET is required for a standalone webhooks sender');
    expect(await readdir(dataDir)).toEqual([]);
  });
});
