import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError } from './config-error.ts';
import { resolveExistingSecret, resolveSecret } from './secret.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'linkroute-secret-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('resolveSecret', () => {
  it('uses LINKROUTE_SECRET when set, as its UTF-8 bytes, and writes no file', async () => {
    const value = 'a-deployment-secret-of-32-chars-or-more';
    expect((await resolveSecret(value, dir)).equals(Buffer.from(value))).toBe(true);
    expect(await readdir(dir)).toEqual([]);
  });

  it('resolveExistingSecret (an ingester): LINKROUTE_SECRET or an existing secret file, never a new one', async () => {
    const value = 'a-deployment-secret-of-32-chars-or-more';
    expect((await resolveExistingSecret(value, dir, 'an ingester')).equals(Buffer.from(value))).toBe(true);
    const missing = await resolveExistingSecret(undefined, join(dir, 'data'), 'an ingester').catch((err: unknown) => err);
    expect(missing).toBeInstanceOf(ConfigError);
    expect((missing as ConfigError).message).toMatch(/^LINKROUTE_SECRET is required for an ingester: .*redirectors' secret.*match no other service's/);
    expect((missing as ConfigError).details).toEqual([{ path: 'LINKROUTE_SECRET', message: expect.stringContaining('required') }]);
    expect(await readdir(dir)).toEqual([]); // nothing generated, not even the data dir
    // A secret file another process of this DATA_DIR wrote (npm start, a redirector) is the deployment's.
    const shared = await resolveSecret(undefined, join(dir, 'data'));
    expect((await resolveExistingSecret('', join(dir, 'data'), 'an ingester')).equals(shared)).toBe(true);
  });

  it('rejects a LINKROUTE_SECRET shorter than 32 characters', async () => {
    const error = await resolveSecret('too-short', dir).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).code).toBe('CONFIG_INVALID');
  });

  it('generates a 0600 secret file in a missing data dir, and reuses it', async () => {
    const dataDir = join(dir, 'nested', 'data');
    const first = await resolveSecret(undefined, dataDir);
    const file = join(dataDir, 'secret');
    expect((await readFile(file, 'utf8')).trim()).toMatch(/^[0-9a-f]{64}$/);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(first.toString()).toBe((await readFile(file, 'utf8')).trim());
    expect((await resolveSecret('', dataDir)).equals(first)).toBe(true);
    expect(await readdir(dataDir)).toEqual(['secret']); // no temporary files left
  });

  it('gives the file content and LINKROUTE_SECRET the same key', async () => {
    const generated = await resolveSecret(undefined, dir);
    expect((await resolveSecret(generated.toString(), join(dir, 'other'))).equals(generated)).toBe(true);
  });

  it('agrees when many callers start together in one process', async () => {
    const secrets = await Promise.all(Array.from({ length: 20 }, () => resolveSecret(undefined, dir)));
    for (const secret of secrets) expect(secret.equals(secrets[0]!)).toBe(true);
    expect(await readdir(dir)).toEqual(['secret']);
  });

  it('agrees when several processes start together', async () => {
    const script = `import { resolveSecret } from ${JSON.stringify(new URL('./secret.ts', import.meta.url).href)};
process.stdout.write((await resolveSecret(undefined, ${JSON.stringify(dir)})).toString());`;
    const outputs = await Promise.all(
      Array.from({ length: 4 }, () => {
        return new Promise<string>((resolve, reject) => {
          const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
          let out = '';
          child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
          child.on('error', reject);
          child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}`))));
        });
      }),
    );
    expect(outputs[0]).toMatch(/^[0-9a-f]{64}$/);
    for (const out of outputs) expect(out).toBe(outputs[0]);
  });

  it('rejects a secret file that is too short', async () => {
    await writeFile(join(dir, 'secret'), 'short\n');
    const error = await resolveSecret(undefined, dir).catch((err: unknown) => err);
    expect((error as ConfigError).code).toBe('CONFIG_INVALID');
  });
});
