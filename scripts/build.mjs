// The production build (`npm run build`; `prepare` runs it on npm install and npm ci):
// the dashboard (`npm run build:dashboard`), then services/ and shared/ compiled by tsc
// into dist/, beside the files they read at run time, so every service runs as
// `node dist/services/<name>/main.js` with no loader.
//
// Plain JavaScript on purpose: it runs before anything is compiled, without tsx.
//
// - dist/ is emptied first: a file moved or deleted in the sources must not live on
//   in a stale dist/ (where a service would still import it).
// - Run-time assets are every non-TypeScript file under services/, shared/ and
//   clickhouse/ (SQL migrations, the chDB worker .mjs, data files), copied to the same
//   relative path, so `new URL('./x', import.meta.url)` finds them from dist/ as it does
//   from the sources. Nothing needs listing here when such a file is added or moved.
// - `--if-changed` (`npm test`'s pretest) builds only when an input changed since the
//   last build (build-inputs.mjs: a hash of every file the build reads, stamped into
//   both outputs once a build succeeded). Right after `npm ci` (whose prepare built)
//   this saves a second ~25 s build; after any edit the hash differs and it builds.
import { spawnSync } from 'node:child_process';
import { cp, readdir, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildInputsHash, isBuilt, writeBuildStamps } from './build-inputs.mjs';

const root = fileURLToPath(new URL('../', import.meta.url));
const dist = join(root, 'dist');
const assetRoots = ['services', 'shared', 'clickhouse'];
// TypeScript sources are compiled (or, for the dashboard, bundled by its own build into
// services/dashboard/dist, which is then copied like any asset); their configs are not run-time files.
const isAsset = (name) => !/\.tsx?$/.test(name) && !/^tsconfig.*\.json$/.test(name);

const inputs = buildInputsHash(root);
if (process.argv.includes('--if-changed') && isBuilt(root, inputs)) {
  console.log('build: dist/ is up to date (no input changed since it was built)');
  process.exit(0);
}

/** Runs an npm script of this package, its output shown; exits on failure. */
function npmRun(script) {
  const result = spawnSync('npm', ['run', script], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    console.error(`build: npm run ${script} failed (exit ${result.status ?? result.signal})`);
    process.exit(1);
  }
}

npmRun('build:dashboard');
await rm(dist, { recursive: true, force: true });

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const compiled = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
if (compiled.status !== 0) {
  console.error(`build: tsc failed (exit ${compiled.status ?? compiled.signal})`);
  process.exit(1);
}

let copied = 0;
for (const top of assetRoots) {
  for (const entry of await readdir(join(root, top), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !isAsset(entry.name)) continue;
    const from = join(entry.parentPath, entry.name);
    await cp(from, join(dist, relative(root, from)));
    copied++;
  }
}
writeBuildStamps(root, inputs);
console.log(`build: dist/ compiled, ${copied} run-time assets copied`);
