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
 *   ClickHouse, and a backlog drain with that tree's ingester (bench/drain-probe.ts),
 *   as the ingest suite measures it. With `--schema after` both trees' ingesters drain into
 *   this tree's ClickHouse schema (its materialized views and all), which separates what
 *   the ingester's code costs from what new rollups cost the engine.
 * Prints the before/after table (medians, per-round figures, change) and exits 1 when an
 * after figure is more than 5 % worse than before. Loopback only; every load bounded.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startChildService } from '../shared/testing/child-service.ts';
import { freePort } from '../shared/testing/free-port.ts';
import { startTestNatsServer, type TestNatsServer } from '../shared/testing/nats-server.ts';
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

/** Runs bench/drain-probe.ts with `tree`'s code; its events/s. */
function drain(tree: Tree, natsUrl: string, clickhouseUrl: string, events: number, schemaTree: Tree): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('./drain-probe.ts', import.meta.url))], {
      cwd: tree.root,
      env: { ...process.env, TREE: tree.root, SCHEMA_TREE: schemaTree.root, NATS_URL: natsUrl, CLICKHOUSE_URL: clickhouseUrl, EVENTS: String(events) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => {
      const rate = /^RATE ([\d.]+)$/m.exec(output);
      if (code !== 0 || !rate) reject(new Error(`drain with the ${tree.label} tree exited ${code}:\n${output.slice(-4000)}`));
      else resolve(Number(rate[1]));
    });
  });
}

/** One backlog drain of `tree` on a nats-server and an embedded ClickHouse of its own, both gone afterwards. */
async function ingestRound(tree: Tree, events: number, schemaTree: Tree): Promise<number> {
  const nats = await startTestNatsServer();
  const dataDir = await mkdtemp(join(tmpdir(), `linkroute-${tree.label}-ch-`));
  const port = await freePort();
  // An older revision's endpoint may take no password: it ignores the variable and the credentials.
  const clickhouse = startChildService('services/clickhouse-embedded/main.ts', { DATA_DIR: dataDir, CLICKHOUSE_PORT: String(port), CLICKHOUSE_PASSWORD: 'bench' }, { cwd: tree.root });
  try {
    await clickhouse.waitFor(/listening/, 120_000);
    return await drain(tree, nats.url, `http://default:bench@127.0.0.1:${port}`, events, schemaTree);
  } finally {
    await clickhouse.kill();
    await nats.destroy();
    await rm(dataDir, { recursive: true, force: true });
  }
}

const change = (before: number, after: number) => Number((((after - before) / before) * 100).toFixed(1));

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
  const sha = git('rev-parse', '--verify', `${rev}^{commit}`);
  const head = git('rev-parse', 'HEAD');
  const dir = await mkdtemp(join(tmpdir(), 'linkroute-before-after-'));
  const before: Tree = { label: 'before', root: join(dir, 'tree') };
  const after: Tree = { label: 'after', root: repoRoot };
  const servers: Server[] = [];
  const natsServers: TestNatsServer[] = [];
  let checkedOut = false;
  const stopRedirectors = async () => {
    await Promise.all(servers.splice(0).map(stopServer));
    await Promise.all(natsServers.splice(0).map((n) => n.destroy()));
  };
  try {
    console.log(`before: ${rev} (${sha.slice(0, 12)}) checked out in ${before.root}; after: this working tree (HEAD ${head.slice(0, 12)})`);
    git('worktree', 'add', '--detach', before.root, sha);
    checkedOut = true;
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
    for (let round = 0; round < rounds; round++) {
      for (const tree of round % 2 === 0 ? [before, after] : [after, before]) {
        const rate = await ingestRound(tree, events, values.schema === 'after' ? after : tree);
        drains.get(tree)!.push(rate);
        console.log(`  ingest round ${round + 1}/${rounds} ${tree.label}: ${Math.round(rate).toLocaleString('en-US')} events/s`);
      }
    }

    const r = (tree: Tree) => redirectors.get(tree)!.runs;
    const figure = (name: string, of: (tree: Tree) => number[], digits: number, higherIsBetter: boolean): { row: Row; fell: boolean } => {
      const [b, a] = [median(of(before)), median(of(after))];
      const row: Row = {
        name,
        before: Number(b.toFixed(digits)),
        after: Number(a.toFixed(digits)),
        'change %': change(b, a),
        'before per round': of(before).map((v) => v.toFixed(digits)).join(' / '),
        'after per round': of(after).map((v) => v.toFixed(digits)).join(' / '),
      };
      return { row, fell: higherIsBetter ? a < b * (1 - MAX_FALL) : a > b * (1 + MAX_FALL) };
    };
    const figures = [
      figure('redirects/s (median)', (t) => r(t).map((m) => m.rps), 0, true),
      figure('redirector server CPU µs/req (median)', (t) => r(t).map((m) => m.cpuUsPerRequest), 2, false),
      figure('redirect p99 ms (median)', (t) => r(t).map((m) => m.p99Ms), 3, false),
      figure(`backlog drain of ${events.toLocaleString('en-US')} events, events/s (median)${values.schema === 'after' ? ', both into this tree\'s schema' : ''}`, (t) => drains.get(t)!, 0, true),
    ];
    const rows = figures.map((f) => f.row);
    const otherCpu = Math.max(...[...redirectors.values()].flatMap((x) => x.runs.map((m) => m.otherCpuPercent)));
    console.log(`\nBefore (${rev}, ${sha.slice(0, 12)}) / after (HEAD ${head.slice(0, 12)} + working tree), ${rounds} alternating rounds\n${formatTable(rows)}`);
    console.log(`note: wrk ${seconds.warmup} s warmup + ${seconds.measured} s per redirector per round; other processes used up to ${Math.round(otherCpu)} % CPU during the redirect rounds${otherCpu > 10 ? ' (over 10 %: rerun on a quiet machine)' : ''}`);
    const gated = [figures[0]!, figures[3]!];
    for (const f of gated) console.log(`${f.fell ? '✗' : '✓'} ${f.row.name}: after ${f.row['change %']} % against before (at most ${MAX_FALL * 100} % worse)`);
    const resultsDir = fileURLToPath(new URL('./results/', import.meta.url));
    await mkdir(resultsDir, { recursive: true });
    const file = join(resultsDir, `before-after-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
    await writeFile(file, `${JSON.stringify({ before: { rev, sha }, after: { head, workingTree: true }, rounds, seconds, events, rows }, null, 2)}\n`);
    console.log(`saved ${file}`);
    return gated.some((f) => f.fell) ? 1 : 0;
  } finally {
    await stopRedirectors();
    if (checkedOut && values.keep) console.log(`kept ${before.root} (git worktree remove --force ${before.root} when done)`);
    else {
      if (checkedOut) git('worktree', 'remove', '--force', before.root);
      await rm(dir, { recursive: true, force: true });
    }
  }
}

process.exitCode = await main();
