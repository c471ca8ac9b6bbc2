import { spawnSync } from 'node:child_process';
import { copyFile, mkdir, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { generateClientTypes } from './client-types.ts';
import { openApiDocument } from './openapi-document.ts';
import { operations } from './operations.ts';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const work = join(root, 'test-output', 'client-type-check', String(process.pid));

/**
 * shared/client/testing/client-usage.ts, a small program against the generated
 * client, type-checked by tsc on its own small tsconfig with client types generated
 * from the document here and now: correct calls compile, wrong ones (each marked
 * `@ts-expect-error`) do not. A document that drifts from its users fails; so does
 * a client typed too loosely to catch anything.
 */
async function typeCheck(name: string, types: string): Promise<{ status: number | null; output: string }> {
  const dir = join(work, name);
  await mkdir(join(dir, 'testing'), { recursive: true });
  await copyFile(join(root, 'shared/client/client.ts'), join(dir, 'client.ts'));
  await copyFile(join(root, 'shared/client/testing/client-usage.ts'), join(dir, 'testing/client-usage.ts'));
  await writeFile(join(dir, 'openapi-types.ts'), types);
  await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({ extends: join(root, 'tsconfig.json'), include: ['testing/client-usage.ts'] }));
  const run = spawnSync(process.execPath, [tsc, '--noEmit', '-p', join(dir, 'tsconfig.json')], { encoding: 'utf8' });
  return { status: run.status, output: run.stdout + run.stderr };
}

describe('the generated client, type-checked by a program that uses it', () => {
  afterAll(() => rm(work, { recursive: true, force: true }));

  it('compiles the correct calls and refuses each wrong one', async () => {
    const result = await typeCheck('current', await generateClientTypes());
    expect(result.output).toBe('');
    expect(result.status).toBe(0);
  }, 60_000);

  it('fails when the document changes under the program (a field renamed)', async () => {
    const document = openApiDocument(operations, 'http://localhost:3000') as { components: { schemas: Record<string, { properties: Record<string, unknown>; required: string[] }> } };
    const link = document.components.schemas.Link!;
    link.properties.shortLink = link.properties.shortUrl;
    delete link.properties.shortUrl;
    link.required = link.required.map((name) => (name === 'shortUrl' ? 'shortLink' : name));
    const result = await typeCheck('renamed', await generateClientTypes(document));
    expect(result.status).not.toBe(0);
    expect(result.output).toMatch(/client-usage\.ts\(\d+,\d+\): error TS2339: Property 'shortUrl' does not exist/);
  }, 60_000);

  it('fails when the client is typed too loosely to catch a wrong call', async () => {
    const result = await typeCheck('loose', 'export type paths = any;\nexport type operations = any;\n');
    expect(result.status).not.toBe(0);
    expect(result.output).toMatch(/error TS2578: Unused '@ts-expect-error' directive/);
  }, 60_000);
});
