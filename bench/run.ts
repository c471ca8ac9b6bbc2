/**
 * Benchmark runner.
 *   npx tsx bench/run.ts            every suite in bench/suites/
 *   npx tsx bench/run.ts routing    only the named suite(s)
 * Prints each suite's table, then a summary; writes bench/results/<suite>-<timestamp>.json.
 * Exits 1 when a suite's acceptance check fails or a suite throws; on Ctrl-C (SIGINT) or
 * SIGTERM, stops what the running suite started and exits 130 or 143 (cleanup.ts).
 */
import { execFileSync } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { installInterruptCleanup, interrupted } from './cleanup.ts';
import type { Row, SuiteModule, SuiteResult } from './suite.ts';
import { formatTable } from './table.ts';

const suitesDir = new URL('./suites/', import.meta.url);
const resultsDir = new URL('./results/', import.meta.url);

async function discover(): Promise<Map<string, SuiteModule>> {
  const files = (await readdir(suitesDir)).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts')).sort();
  const suites = new Map<string, SuiteModule>();
  for (const file of files) {
    const mod = (await import(new URL(file, suitesDir).href)) as Partial<SuiteModule>;
    if (typeof mod.run !== 'function') continue;
    suites.set(mod.name ?? basename(file, '.ts'), mod as SuiteModule);
  }
  return suites;
}

/** The commit measured, and whether the working tree differed from it (then the figures are of uncommitted code). */
function revision(): { commit: string; dirty: boolean } | { commit: null; error: string } {
  const git = (...args: string[]) => execFileSync('git', ['-C', fileURLToPath(new URL('../', import.meta.url)), ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  try {
    return { commit: git('rev-parse', 'HEAD'), dirty: git('status', '--porcelain') !== '' };
  } catch (err) {
    // Not a git checkout (an unpacked release): the results say so rather than failing.
    return { commit: null, error: err instanceof Error ? err.message.split('\n')[0]! : String(err) };
  }
}

function environment() {
  const cpus = os.cpus();
  return {
    node: process.version,
    platform: `${os.platform()} ${os.arch()}`,
    cpu: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
  };
}

async function save(result: SuiteResult, startedAt: Date, load: number[]): Promise<string> {
  await mkdir(resultsDir, { recursive: true });
  const stamp = startedAt.toISOString().replace(/[:.]/g, '-');
  const file = new URL(`${result.suite}-${stamp}.json`, resultsDir);
  const record = {
    startedAt: startedAt.toISOString(),
    environment: environment(),
    revision: revision(),
    // The machine's load averages (1, 5, 15 min) at the start and the end of the suite: how busy it was around the figures.
    loadAverage: { atStart: load, atEnd: os.loadavg().map((n) => Number(n.toFixed(2))) },
    ...result,
  };
  await writeFile(file, `${JSON.stringify(record, null, 2)}\n`);
  return fileURLToPath(file);
}

async function main(): Promise<number> {
  const suites = await discover();
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((name) => !suites.has(name));
  if (unknown.length > 0) {
    console.error(`unknown suite(s): ${unknown.join(', ')}; available: ${[...suites.keys()].join(', ')}`);
    return 2;
  }
  const selected = wanted.length > 0 ? wanted : [...suites.keys()];
  const env = environment();
  console.log(`node ${env.node}, ${env.platform}, ${env.cpu} x${env.cores}`);

  const summary: Row[] = [];
  let failed = false;
  for (const name of selected) {
    if (interrupted()) break;
    const suite = suites.get(name)!;
    console.log(`\n▶ ${name}: ${suite.description}`);
    const startedAt = new Date();
    const load = os.loadavg().map((n) => Number(n.toFixed(2)));
    let result: SuiteResult;
    try {
      result = await suite.run();
    } catch (error) {
      failed = true;
      if (interrupted()) break; // its error is the cleanup's doing
      console.error(`✗ ${name} failed:`, error);
      summary.push({ name, status: 'error', seconds: (Date.now() - startedAt.getTime()) / 1000, checks: '' });
      continue;
    }
    const seconds = (Date.now() - startedAt.getTime()) / 1000;
    console.log(`\n${formatTable(result.rows)}`);
    if (result.baseline) console.log(`baseline: ${result.baseline.name}`);
    for (const table of result.tables ?? []) console.log(`\n${table.title}\n${formatTable(table.rows)}`);
    for (const note of result.notes ?? []) console.log(`note: ${note}`);
    const checks = result.checks ?? [];
    for (const check of checks) console.log(`${check.pass ? '✓' : '✗'} ${check.name}: ${check.detail}`);
    const passed = checks.filter((check) => check.pass).length;
    if (passed < checks.length) failed = true;
    const file = await save(result, startedAt, load);
    console.log(`saved ${file}`);
    summary.push({
      name,
      status: passed < checks.length ? 'FAIL' : 'ok',
      seconds,
      checks: checks.length === 0 ? '-' : `${passed}/${checks.length}`,
    });
  }
  console.log(`\nSummary\n${formatTable(summary)}`);
  return failed ? 1 : 0;
}

installInterruptCleanup();
try {
  process.exitCode = await main();
} catch (err) {
  // Once interrupted, the cleanup ends the process (exit 130 or 143); what its teardown broke is expected.
  if (!interrupted()) throw err;
}
