/**
 * Before/after: the README's redirect and ingest figures of another revision ("before")
 * and of this working tree ("after"), measured in one run, their rounds alternating so
 * that a busy spell of the machine falls on both alike.
 *
 *   npm run bench:against -- <git-rev> [--rounds 3] [--seconds 8] [--warmup 2] [--events 400000] [--schema own|after] [--keep]
 *
 * The revision is checked out into a temporary git worktree (detached; removed at the
 * end unless --keep) and installed there with `npm ci` (the npm cache serves the
 * packages; a revision with a build script is built by its `prepare`). Then:
 * - redirect: each tree's own benchmark redirector (bench/servers/redirector-server.ts:
 *   100k links, the real request path, events to a private nats-server of its own),
 *   both running, loaded in turn by the same wrk script as the redirect suite's;
 * - ingest: per round and tree, a fresh nats-server and that tree's own embedded
 *   ClickHouse, and a backlog drain with that tree's ingester (bench/drain-probe.ts). Not
 *   the ingest suite's measurement: low-cardinality events (bench/bench-events.ts) into
 *   empty tables each round, so it shows the ingester code's cost apart from what the
 *   tables hold. With `--schema after` both trees' ingesters drain into this tree's
 *   ClickHouse schema (its materialized views and all), which separates what the
 *   ingester's code costs from what new rollups cost the engine.
 * Prints the before/after table (medians, per-round figures, each side's spread, change)
 * and the CPU other processes used in every round. A gated figure fails (exit 1) only
 * when after is worse than before by more than MAX_FALL and by more than the noise: the
 * larger of the two sides' spreads ((max - min) / median of its rounds). Within the noise
 * it is reported as such, whatever its size. A revision that is not a commit: one line,
 * exit 2. Ctrl-C removes the worktree and stops what runs (cleanup.ts). Loopback only;
 * every load bounded.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { freePort } from '../shared/testing/free-port.ts';
import { startTestNatsServer, type TestNatsServer } from '../shared/testing/nats-server.ts';
import { benchTempDir, childNodeOptions, installInterruptCleanup, interrupted, onInterrupt, startBenchService, stopOnInterrupt } from './cleanup.ts';
import { cpuMeter, OTHER_CPU_WARNING_PERCENT } from './process-cpu.ts';
import { median } from './stats.ts';
import { checkRedirector, measure, startServer, stopServer, wrkScript, type Measurement, type Server } from './suites/redirect.ts';
import type { Row } from './suite.ts';
import { formatTable } from './table.ts';
import { requireWrk } from './wrk.ts';

/** The most an after figure may be worse than before. */
const MAX_FALL = 0.05;

interface Tree {
  label: 'before' | 'after';
  root: string;
}

const repoRoot = fileURLToPath(new URL('../', import.meta.url));

const git = (...args: string[]) => execFileSync('git', ['-C', repoRoot, ...args], { encoding: 'utf8' }).trim();

/** A command that exited with an error; `output` is its stdout and stderr. */
class CommandFailed extends Error {
  readonly output: string;
  constructor(message: string, output: string) {
    super(`${message}:\n${output.slice(-4000)}`);
    this.name = 'CommandFailed';
    this.output = output;
  }
}

/** Runs a command in `cwd`, its output kept and shown only if it fails. */
function run(command: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    stopOnInterrupt(`${command} ${args.join(' ')}`, child);
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new CommandFailed(`${command} ${args.join(' ')} in ${cwd} exited ${code}`, output))));
  });
}

/**
 * `npm ci` in `root`, from the npm cache where it can. Some older revisions' lock files
 * lack other platforms' optional packages, which npm ci refuses (EUSAGE); those get
 * `npm install`, which keeps every version the lock file names.
 */
async function install(root: string): Promise<void> {
  const flags = ['--no-audit', '--no-fund', '--prefer-offline'];
  console.log('  npm ci in the before tree');
  try {
    await run('npm', ['ci', ...flags], root);
  } catch (err) {
    if (!(err instanceof CommandFailed && /npm error code EUSAGE/.test(err.output))) throw err;
    console.log('  its package-lock.json is out of step with package.json (npm ci refuses it): npm install, keeping the locked versions');
    await run('npm', ['install', ...flags], root);
  }
}

/** Runs bench/drain-probe.ts with `tree`'s code; its events/s and its process's CPU seconds. */
function drain(tree: Tree, natsUrl: string, clickhouseUrl: string, events: number, schemaTree: Tree): Promise<{ rate: number; cpuSeconds: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./drain-probe.ts', import.meta.url))], {
      cwd: tree.root,
      env: { ...process.env, TREE: tree.root, SCHEMA_TREE: schemaTree.root, NATS_URL: natsUrl, CLICKHOUSE_URL: clickhouseUrl, EVENTS: String(events), NODE_OPTIONS: childNodeOptions() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    stopOnInterrupt(`drain probe (${tree.label})`, child);
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      const rate = /^RATE ([\d.]+)$/m.exec(output);
      const cpu = /^CPU ([\d.]+)$/m.exec(output);
      if (code !== 0 || !rate || !cpu) reject(new Error(`drain with the ${tree.label} tree exited ${code}:\n${output.slice(-4000)}`));
      else resolve({ rate: Number(rate[1]), cpuSeconds: Number(cpu[1]) });
    });
  });
}

/**
 * One backlog drain of `tree` on a nats-server and an embedded ClickHouse of its own, both
 * gone afterwards: its events/s, and the CPU that processes other than the probe, the
 * engine, nats-server and this one used meanwhile (% of one core, as the redirect rounds').
 */
async function ingestRound(tree: Tree, events: number, schemaTree: Tree): Promise<{ rate: number; otherCpuPercent: number }> {
  const nats = await startTestNatsServer();
  const dataDir = await benchTempDir(`linkroute-${tree.label}-ch-`);
  const port = await freePort();
  // An older revision's endpoint may take no password: it ignores the variable and the credentials.
  const clickhouse = startBenchService('services/clickhouse-embedded/main.ts', { DATA_DIR: dataDir, CLICKHOUSE_PORT: String(port), CLICKHOUSE_PASSWORD: 'bench' }, { cwd: tree.root });
  try {
    await clickhouse.waitFor(/listening/, 120_000);
    const meter = await cpuMeter({ clickhouse: clickhouse.pid, nats: nats.pid });
    const self = process.cpuUsage();
    const started = performance.now();
    const { rate, cpuSeconds } = await drain(tree, nats.url, `http://default:bench@127.0.0.1:${port}`, events, schemaTree);
    const seconds = (performance.now() - started) / 1000;
    const ownSeconds = process.cpuUsage(self);
    const others = Math.max(0, (await meter.stop()).others! - cpuSeconds - (ownSeconds.user + ownSeconds.system) / 1e6);
    return { rate, otherCpuPercent: (others / seconds) * 100 };
  } finally {
    await clickhouse.kill();
    await nats.destroy();
    await rm(dataDir, { recursive: true, force: true });
  }
}

const change = (before: number, after: number) => Number((((after - before) / before) * 100).toFixed(1));
/** A side's spread over its rounds, % of its median: how far its own rounds disagree. */
const spread = (values: number[]) => ((Math.max(...values) - Math.min(...values)) / median(values)) * 100;

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      rounds: { type: 'string', default: '3' },
      seconds: { type: 'string', default: '8' },
      warmup: { type: 'string', default: '2' },
      events: { type: 'string', default: '400000' },
      keep: { type: 'boolean', default: false },
      schema: { type: 'string', default: 'own' },
    },
  });
  const rev = positionals[0];
  const rounds = Number(values.rounds);
  const seconds = { warmup: Number(values.warmup), measured: Number(values.seconds) };
  const events = Number(values.events);
  if (!rev || positionals.length > 1 || ![rounds, seconds.warmup, seconds.measured, events].every((n) => Number.isInteger(n) && n > 0) || events % 500 !== 0 || !['own', 'after'].includes(values.schema)) {
    console.error('usage: npm run bench:against -- <git-rev> [--rounds N] [--seconds N] [--warmup N] [--events N (a multiple of 500)] [--schema own|after] [--keep]');
    return 2;
  }
  requireWrk();
  let sha: string;
  try {
    sha = execFileSync('git', ['-C', repoRoot, 'rev-parse', '--verify', '--quiet', `${rev}^{commit}`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch (err) {
    // git exits 1 for a name that is not a commit; anything else (no git) is not ours to explain.
    if ((err as { status?: number }).status !== 1) throw err;
    console.error(`bench:against: ${rev} is not a commit of this repository (git rev-parse --verify ${rev})`);
    return 2;
  }
  const head = git('rev-parse', 'HEAD');
  const dir = await benchTempDir('linkroute-before-after-');
  const before: Tree = { label: 'before', root: join(dir, 'tree') };
  const after: Tree = { label: 'after', root: repoRoot };
  const servers: Server[] = [];
  const natsServers: TestNatsServer[] = [];
  let checkedOut = false;
  // Once: on Ctrl-C both the cleanup and the finally below come here (git fails on a second remove).
  const removeWorktree = () => {
    if (!checkedOut) return;
    checkedOut = false;
    git('worktree', 'remove', '--force', before.root);
  };
  const stopRedirectors = async () => {
    await Promise.all(servers.splice(0).map(stopServer));
    await Promise.all(natsServers.splice(0).map((n) => n.destroy()));
  };
  try {
    console.log(`before: ${rev} (${sha.slice(0, 12)}) checked out in ${before.root}; after: this working tree (HEAD ${head.slice(0, 12)})`);
    git('worktree', 'add', '--detach', before.root, sha);
    checkedOut = true;
    // Interrupted, the worktree goes even with --keep: it is half-measured and registered in .git.
    onInterrupt(`git worktree ${before.root}`, removeWorktree);
    await install(before.root);

    // Redirect: both redirectors up, each with its own nats-server; wrk loads them in turn.
    const script = join(dir, 'redirect.lua');
    await writeFile(script, wrkScript());
    const redirectors = new Map<Tree, { server: Server; natsPid: number; runs: Measurement[] }>();
    for (const tree of [before, after]) {
      const nats = await startTestNatsServer();
      natsServers.push(nats);
      const server = await startServer(`${tree.label} redirector`, join(tree.root, 'bench/servers/redirector-server.ts'), { NATS_URL: nats.url }, tree.root);
      servers.push(server);
      await checkRedirector(server);
      redirectors.set(tree, { server, natsPid: nats.pid, runs: [] });
    }
    for (let round = 0; round < rounds; round++) {
      for (const tree of round % 2 === 0 ? [before, after] : [after, before]) {
        const { server, natsPid, runs } = redirectors.get(tree)!;
        const m = await measure(server, script, natsPid, seconds);
        runs.push(m);
        console.log(`  redirect round ${round + 1}/${rounds} ${tree.label}: ${Math.round(m.rps).toLocaleString('en-US')} req/s, ${m.cpuUsPerRequest.toFixed(2)} µs CPU/req, other processes ${Math.round(m.otherCpuPercent)} %`);
      }
    }
    await stopRedirectors();

    const drains = new Map<Tree, number[]>([
      [before, []],
      [after, []],
    ]);
    const drainOtherCpu: number[] = [];
    for (let round = 0; round < rounds; round++) {
      for (const tree of round % 2 === 0 ? [before, after] : [after, before]) {
        const { rate, otherCpuPercent } = await ingestRound(tree, events, values.schema === 'after' ? after : tree);
        drains.get(tree)!.push(rate);
        drainOtherCpu.push(otherCpuPercent);
        console.log(`  ingest round ${round + 1}/${rounds} ${tree.label}: ${Math.round(rate).toLocaleString('en-US')} events/s, other processes ${Math.round(otherCpuPercent)} %`);
      }
    }

    const r = (tree: Tree) => redirectors.get(tree)!.runs;
    const figure = (name: string, of: (tree: Tree) => number[], digits: number, higherIsBetter: boolean): { row: Row; fell: boolean; noise: number; withinNoise: boolean } => {
      const [b, a] = [median(of(before)), median(of(after))];
      const noise = Math.max(spread(of(before)), spread(of(after)));
      const changed = change(b, a);
      const worse = higherIsBetter ? -changed : changed;
      const withinNoise = Math.abs(changed) <= noise;
      const row: Row = {
        name,
        before: Number(b.toFixed(digits)),
        after: Number(a.toFixed(digits)),
        'change %': changed,
        'before spread %': Number(spread(of(before)).toFixed(1)),
        'after spread %': Number(spread(of(after)).toFixed(1)),
        verdict: withinNoise ? 'within noise' : worse > 0 ? 'worse' : 'better',
        'before per round': of(before).map((v) => v.toFixed(digits)).join(' / '),
        'after per round': of(after).map((v) => v.toFixed(digits)).join(' / '),
      };
      return { row, fell: worse > MAX_FALL * 100 && worse > noise, noise, withinNoise };
    };
    const figures = [
      figure('redirects/s (median)', (t) => r(t).map((m) => m.rps), 0, true),
      figure('redirector server CPU µs/req (median)', (t) => r(t).map((m) => m.cpuUsPerRequest), 2, false),
      figure('redirect p99 ms (median)', (t) => r(t).map((m) => m.p99Ms), 3, false),
      figure(`backlog drain of ${events.toLocaleString('en-US')} events, events/s (median)${values.schema === 'after' ? ', both into this tree\'s schema' : ''}`, (t) => drains.get(t)!, 0, true),
    ];
    const rows = figures.map((f) => f.row);
    const otherCpu = Math.max(...[...redirectors.values()].flatMap((x) => x.runs.map((m) => m.otherCpuPercent)));
    const drainOther = Math.max(...drainOtherCpu);
    console.log(`\nBefore (${rev}, ${sha.slice(0, 12)}) / after (HEAD ${head.slice(0, 12)} + working tree), ${rounds} alternating rounds\n${formatTable(rows)}`);
    console.log(`note: wrk ${seconds.warmup} s warmup + ${seconds.measured} s per redirector per round; the drains: bench/drain-probe.ts's low-cardinality events into an empty ClickHouse each round (the ingester code's cost apart from what the tables hold, not the ingest suite's figure)`);
    console.log(`note: spread % = (max - min) / median of a side's rounds; a change no larger than the larger spread is "within noise"`);
    const busy = (max: number) => (max > OTHER_CPU_WARNING_PERCENT ? ` (WARNING: over ${OTHER_CPU_WARNING_PERCENT} %: rerun on a quiet machine)` : '');
    console.log(`note: other processes used up to ${Math.round(otherCpu)} % CPU (of one core) during the redirect rounds${busy(otherCpu)}, up to ${Math.round(drainOther)} % during the drain rounds${busy(drainOther)}`);
    const gated = [figures[0]!, figures[3]!];
    for (const f of gated) {
      const verdict = f.withinNoise ? `within noise (spread up to ${f.noise.toFixed(1)} %)` : `noise ${f.noise.toFixed(1)} %`;
      console.log(`${f.fell ? '✗' : '✓'} ${f.row.name}: after ${f.row['change %']} % against before, ${verdict} (fails only when worse by more than ${MAX_FALL * 100} % and more than the noise)`);
    }
    const resultsDir = fileURLToPath(new URL('./results/', import.meta.url));
    await mkdir(resultsDir, { recursive: true });
    const file = join(resultsDir, `before-after-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    await writeFile(file, `${JSON.stringify({ before: { rev, sha }, after: { head, workingTree: true }, rounds, seconds, events, rows, otherCpuPercent: { redirect: otherCpu, drain: drainOther } }, null, 2)}\n`);
    console.log(`saved ${file}`);
    return gated.some((f) => f.fell) ? 1 : 0;
  } finally {
    await stopRedirectors();
    if (checkedOut && values.keep) console.log(`kept ${before.root} (git worktree remove --force ${before.root} when done)`);
    else {
      removeWorktree();
      await rm(dir, { recursive: true, force: true });
    }
  }
}

installInterruptCleanup();
try {
  process.exitCode = await main();
} catch (err) {
  // Once interrupted, the cleanup ends the process (exit 130 or 143); what its teardown broke is expected.
  if (!interrupted()) throw err;
}
