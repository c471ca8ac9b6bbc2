/**
 * `npm run build:dashboard` (and `npm install`, through prepare): builds the
 * dashboard with Vite into services/dashboard/dist, writes a gzip copy of every
 * file beside it (the API serves those to browsers that accept gzip) and prints the
 * sizes against the JavaScript budget. The API client types it is written against
 * (shared/client/openapi-types.ts) are generated just before, by the API's own script
 * (services/api/openapi/client-types.ts) run from the same npm script: no service
 * imports another.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'vite';

/** DESIGN.md, performance budgets: the dashboard's JavaScript, gzip. */
export const JS_BUDGET_BYTES = 250 * 1024;

const root = fileURLToPath(new URL('.', import.meta.url));
const dist = join(root, 'dist');

await build({ configFile: join(root, 'vite.config.ts') });

const files: Array<{ name: string; raw: number; gzip: number }> = [];
const walk = (dir: string) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path);
    else if (!entry.name.endsWith('.gz')) {
      const body = readFileSync(path);
      const gzip = gzipSync(body, { level: 9 });
      writeFileSync(`${path}.gz`, gzip);
      files.push({ name: relative(dist, path), raw: body.length, gzip: gzip.length });
    }
  }
};
walk(dist);
files.sort((a, b) => a.name.localeCompare(b.name));

const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`;
const js = files.filter((f) => f.name.endsWith('.js'));
const jsGzip = js.reduce((sum, f) => sum + f.gzip, 0);
const lines = [
  'dashboard build (services/dashboard/dist):',
  ...files.map((f) => `  ${f.name.padEnd(44)} ${kb(f.raw).padStart(10)}  gzip ${kb(f.gzip).padStart(9)}`),
  `  JavaScript, gzip: ${kb(jsGzip)} of ${kb(JS_BUDGET_BYTES)} budget ${jsGzip <= JS_BUDGET_BYTES ? '✓' : '✗ over budget'}`,
];
process.stdout.write(`${lines.join('\n')}\n`);
writeFileSync(join(dist, 'build-sizes.json'), JSON.stringify({ files, jsGzip, budget: JS_BUDGET_BYTES }, null, 2));
