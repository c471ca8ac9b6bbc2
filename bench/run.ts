/**
 * Benchmark runner.
 *   npx tsx bench/run.ts            every suite in bench/suites/
 *   npx tsx bench/run.ts routing    only the named suite(s)
 * Prints each suite's table, then a summary; writes bench/results/<suite>-<timestamp>.json.
 * Exits 1 when a suite's acceptance check fails or a suite throws.
 */
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
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

function environment() {
  const cpus = os.cpus();
  return {
    node: process.version,
    platform: `${os.platform()} ${os.arch()}`,
    cpu: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
  };
}

async function save(result: SuiteResult, startedAt: Date): Promise<string> {
  await mkdir(resultsDir, { recursive: true });
  const stamp = startedAt.toISOString().replace(/[:.]/g, '-');
  const file = new URL(`${result.suite}-${stamp}.json`, resultsDir);
  await writeFile(file, `${JSON.stringify({ startedAt: startedAt.toISOString(), environment: environment(), ...result }, null, 2)}\n`);
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
    const suite = suites.get(name)!;
    console.log(`\n▶ ${name}: ${suite.description}`);
    const startedAt = new Date();
    let result: SuiteResult;
    try {
      result = await suite.run();
    } catch (error) {
      failed = true;
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
    const file = await save(result, startedAt);
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

process.exitCode = await main();
