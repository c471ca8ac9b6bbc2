/**
 * Redirect throughput (DESIGN "Performance budgets"): our redirector (100k links, a mix
 * with rules, the real request path: UA parse, geo-IP, visitor hash, decide, click id,
 * event) against a bare uWebSockets.js server answering a fixed 302. Same machine, same
 * load generator (wrk, one thread, keep-alive), same run; each server in its own child
 * process. Rounds rotate the servers' order so drift on a shared machine hits all.
 *
 * A third server is the floor (servers/click-floor.ts): bare uWS plus only the per-click
 * work DESIGN requires of any implementation. It shows how much of the gap to the bare
 * server is the redirector's own and how much is the budget's on this machine.
 *
 * Every request carries a rotating short code (all 100k), User-Agent and public
 * X-Forwarded-For address, and no cookie: the worst case for the redirector (a hashed
 * visitor id and a Set-Cookie on every answer). The bare server gets the same requests.
 *
 * Alongside requests/s the suite reports each server's CPU time per request (from
 * /proc): when the load generator rather than the server is the bottleneck, requests/s
 * converge while CPU per request still shows the servers' real cost. It also reports
 * wrk's CPU, the private nats-server's CPU per redirect (a cost only our side has, on the
 * same cores), and the CPU other processes used during each round, with a warning above
 * 10 %: on a shared machine such rounds measure the neighbours as much as the servers.
 * Targets 127.0.0.1 only.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { startTestNatsServer } from '../../shared/testing/nats-server.ts';
import { mulberry32 } from '../../shared/testing/seeded-random.ts';
import { readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import { ClickIdIssuer, verifyClickId } from '../../shared/click-id.ts';
import { realUserAgents } from '../../shared/request-facts/sample-user-agents.ts';
import { userAgentDigest, VisitorHasher } from '../../shared/visitor.ts';
import { BENCH_LINK_COUNT, benchShortCode } from '../servers/bench-links.ts';
import type { Check, Row, SuiteResult } from '../suite.ts';
import { median } from '../stats.ts';
import { machineBusySeconds, OTHER_CPU_WARNING_PERCENT, processCpuSeconds } from '../process-cpu.ts';
import { requireWrk, runWrk, WRK_RESULT_LUA, wrkErrors } from '../wrk.ts';
import { floorBreakdownRows, measureFloorPieces } from '../floor-breakdown.ts';
import { measurePieces } from '../redirect-pieces.ts';
import { nsPerCall } from '../timing.ts';
import { benchTempDir, childNodeOptions, stopChild, stopOnInterrupt } from '../cleanup.ts';

export const name = 'redirect';
export const description = 'redirect throughput: our redirector (100k links, rules, events) vs a bare uWS fixed 302, wrk';

const ROUNDS = 3;
const WARMUP_SECONDS = 2;
const MEASURE_SECONDS = 8;
const CONNECTIONS = 64;
const TARGET_RATIO = 0.8;
const FLOOR_LABEL = 'floor: uWS + click id, visitor, event';
const COOKIE_LABEL = 'bare uWS + Set-Cookie';
const START_TIMEOUT_MS = 180_000;

const serversDir = new URL('../servers/', import.meta.url);

export interface Server {
  label: string;
  child: ChildProcess;
  port: number;
  stdout: string[];
}

const serverFile = (file: string) => fileURLToPath(new URL(file, serversDir));

/**
 * A benchmark server (a TypeScript file that prints `READY <port>`) in its own process;
 * `cwd`: the tree whose tsx runs it (another checkout's, bench/before-after.ts).
 */
export function startServer(label: string, path: string, env: Record<string, string> = {}, cwd?: string): Promise<Server> {
  const child = spawn(process.execPath, ['--import', 'tsx', path], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, ...env, NODE_OPTIONS: childNodeOptions() },
    ...(cwd ? { cwd } : {}),
  });
  stopOnInterrupt(label, child);
  const stdout: string[] = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${label} did not start in ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
    let buffered = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      let newline: number;
      while ((newline = buffered.indexOf('\n')) !== -1) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        stdout.push(line);
        const ready = /^READY (\d+)$/.exec(line);
        if (ready) {
          clearTimeout(timer);
          resolve({ label, child, port: Number(ready[1]), stdout });
        }
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${label} exited with ${code} before it was ready`));
    });
  });
}

/** SIGTERM by PID, then wait for the exit (SIGKILL after 5 s). */
export function stopServer(server: Server): Promise<void> {
  return stopChild(server.child);
}

/**
 * CPU seconds of this process's children that have exited and been waited for (Linux
 * /proc/self/stat cutime + cstime): across one wrk run, wrk is the only such child.
 */
async function exitedChildrenCpuSeconds(): Promise<number> {
  const stat = await readFile('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

function get(port: number, path: string, headers: Record<string, string> = {}): Promise<{ status: number; location: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, location: res.headers.location }));
    });
    req.on('error', reject);
  });
}

/** Throws unless `server` redirects a benchmark short code to its link's destination, from its snapshot. */
export async function checkRedirector(server: Server): Promise<void> {
  const sample = await get(server.port, `/${benchShortCode(12_345)}`, { 'x-forwarded-for': '81.2.69.142' });
  if (sample.status !== 302 || !sample.location?.startsWith('https://example.com/landing/12345')) {
    throw new Error(`${server.label} answered ${sample.status} ${sample.location} for a benchmark code`);
  }
}

/** Deterministic public IPv4 addresses (mulberry32), like the routing suite's. */
function publicIpv4s(count: number): string[] {
  const random = mulberry32(7);
  const ips: string[] = [];
  while (ips.length < count) {
    const first = 1 + Math.floor(random() * 222);
    if ([10, 100, 127, 169, 172, 192].includes(first)) continue;
    ips.push(`${first}.${Math.floor(random() * 256)}.${Math.floor(random() * 256)}.${1 + Math.floor(random() * 254)}`);
  }
  return ips;
}

/**
 * The wrk script: every request is prebuilt in init() (so the generator spends its time
 * on sockets, not string building), codes visited in a scrambled order, and done()
 * prints one machine-readable line.
 */
export function wrkScript(): string {
  const uas = Object.values(realUserAgents);
  const ips = publicIpv4s(256);
  const luaList = (values: string[]) => `{${values.map((v) => JSON.stringify(v)).join(',')}}`;
  return `
local uas = ${luaList(uas)}
local ips = ${luaList(ips)}
local n = ${BENCH_LINK_COUNT}
local digits = "0123456789abcdefghijklmnopqrstuvwxyz"
local function code(i)
  local s = ""
  repeat
    local d = i % 36
    s = digits:sub(d + 1, d + 1) .. s
    i = math.floor(i / 36)
  until i == 0
  while #s < 4 do s = "0" .. s end
  return "b" .. s
end
local requests = {}
init = function(args)
  for k = 0, n - 1 do
    local i = (k * 7919) % n
    requests[k + 1] = wrk.format("GET", "/" .. code(i), {
      ["User-Agent"] = uas[(k % #uas) + 1],
      ["X-Forwarded-For"] = ips[(k % #ips) + 1],
    })
  end
end
local cursor = 0
request = function()
  cursor = (cursor % n) + 1
  return requests[cursor]
end
${WRK_RESULT_LUA}`;
}

export interface Measurement {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  cpuPercent: number;
  cpuUsPerRequest: number;
  errors: number;
  /** Warmup and measured requests together: what the server answered in this round. */
  answered: number;
  /** CPU of the private nats-server per request (the click events' share outside our process). */
  natsCpuUsPerRequest: number;
  wrkCpuPercent: number;
  /**
   * CPU used by everything else on the machine during the round (of all cores together):
   * other processes competing with the servers make a round's numbers unreliable.
   */
  otherCpuPercent: number;
}

/** One round against `server`: warmup, then the measured wrk run; `seconds` shortens them for a trial. */
export async function measure(server: Server, script: string, natsPid: number, seconds = { warmup: WARMUP_SECONDS, measured: MEASURE_SECONDS }): Promise<Measurement> {
  const warmup = await runWrk({ url: `http://127.0.0.1:${server.port}/`, script, seconds: seconds.warmup, connections: CONNECTIONS });
  const pid = server.child.pid!;
  const cpuBefore = await processCpuSeconds(pid);
  const natsBefore = natsPid === 0 ? 0 : await processCpuSeconds(natsPid);
  const wrkBefore = await exitedChildrenCpuSeconds();
  const selfBefore = process.cpuUsage();
  const machineBefore = await machineBusySeconds();
  const result = await runWrk({ url: `http://127.0.0.1:${server.port}/`, script, seconds: seconds.measured, connections: CONNECTIONS });
  const machine = (await machineBusySeconds()) - machineBefore;
  const self = process.cpuUsage(selfBefore);
  const wrk = (await exitedChildrenCpuSeconds()) - wrkBefore;
  const nats = natsPid === 0 ? 0 : (await processCpuSeconds(natsPid)) - natsBefore;
  const cpu = (await processCpuSeconds(pid)) - cpuBefore;
  const elapsed = result.durationUs / 1e6;
  const other = Math.max(0, machine - cpu - nats - wrk - (self.user + self.system) / 1e6);
  return {
    rps: result.requests / elapsed,
    p50Ms: result.p50Us / 1000,
    p99Ms: result.p99Us / 1000,
    cpuPercent: (cpu / elapsed) * 100,
    cpuUsPerRequest: (cpu * 1e6) / result.requests,
    errors: wrkErrors(result),
    answered: warmup.requests + result.requests,
    natsCpuUsPerRequest: (nats * 1e6) / result.requests,
    wrkCpuPercent: (wrk / elapsed) * 100,
    otherCpuPercent: (other / elapsed) * 100,
  };
}

/** ns per call of the two MACs on the request path, as the redirector makes them (serve-link.ts): best of 20 batches of 20k (warm). */
function hotPathCrypto(): { create: number; verify: number; visitor: number } {
  const secret = randomBytes(32);
  const clickIds = new ClickIdIssuer(secret);
  const visitors = new VisitorHasher(secret);
  const linkId = 'link_BENCH00000000000012345';
  // The request path takes the UA's digest from its User-Agent cache.
  const digests = Object.values(realUserAgents).map((ua) => userAgentDigest(ua));
  const ips = publicIpv4s(256);
  const clickId = clickIds.issue(linkId, Date.now());
  const now = Date.now();
  return {
    create: nsPerCall((i) => clickIds.issue(linkId, now + i)),
    verify: nsPerCall(() => verifyClickId(secret, clickId)),
    visitor: nsPerCall((i) => visitors.hash(ips[i & 255]!, digests[i % digests.length]!, now)),
  };
}

function summarize(label: string, runs: Measurement[]): Row {
  return {
    name: label,
    'req/s': Math.round(median(runs.map((r) => r.rps))),
    'p50 ms': Number(median(runs.map((r) => r.p50Ms)).toFixed(3)),
    'p99 ms': Number(median(runs.map((r) => r.p99Ms)).toFixed(3)),
    'server CPU %': Math.round(median(runs.map((r) => r.cpuPercent))),
    'server CPU µs/req': Number(median(runs.map((r) => r.cpuUsPerRequest)).toFixed(2)),
    'req/s per round': runs.map((r) => Math.round(r.rps)).join(' / '),
    'wrk CPU %': Math.round(median(runs.map((r) => r.wrkCpuPercent))),
    'other procs CPU % (max of rounds)': Math.round(Math.max(...runs.map((r) => r.otherCpuPercent))),
    errors: runs.reduce((sum, r) => sum + r.errors, 0),
  };
}

export async function run(): Promise<SuiteResult> {
  requireWrk();
  const dir = await benchTempDir('linkroute-bench-redirect-');
  const script = join(dir, 'redirect.lua');
  await writeFile(script, wrkScript());
  const servers: Server[] = [];
  // Events flow to a private NATS server, so a benchmark's million events never land in a shared stream.
  const nats = await startTestNatsServer();
  try {
    process.stdout.write(`  starting servers (redirector loads ${BENCH_LINK_COUNT.toLocaleString('en-US')} links)\n`);
    const [bare, bareCookie, floor, ours] = await Promise.all([
      startServer('bare uWS fixed 302', serverFile('bare-uws.ts')),
      startServer(COOKIE_LABEL, serverFile('bare-uws.ts'), { BARE_SET_COOKIE: '1' }),
      startServer(FLOOR_LABEL, serverFile('click-floor.ts'), { NATS_URL: nats.url }),
      startServer('linkroute redirector', serverFile('redirector-server.ts'), { NATS_URL: nats.url }),
    ]);
    servers.push(bare!, bareCookie!, floor!, ours!);

    // Both must answer the generator's requests with redirects, ours from its snapshot.
    await checkRedirector(ours!);
    if ((await get(bare!.port, '/x')).status !== 302) throw new Error('bare server does not answer 302');
    if ((await get(floor!.port, `/${benchShortCode(12_345)}`, { 'x-forwarded-for': '81.2.69.142' })).status !== 302) {
      throw new Error('floor server does not answer 302');
    }

    const natsPid = nats.pid;
    const rotation = [bare!, bareCookie!, floor!, ours!];
    const runs = new Map<Server, Measurement[]>(rotation.map((server) => [server, []]));
    // Each round starts with a different server, so drift on a shared machine hits all.
    for (let round = 0; round < ROUNDS; round++) {
      const shift = round % rotation.length;
      const order = [...rotation.slice(shift), ...rotation.slice(0, shift)];
      for (const server of order) {
        const result = await measure(server, script, natsPid);
        runs.get(server)!.push(result);
        process.stdout.write(
          `  round ${round + 1}/${ROUNDS} ${server.label}: ${Math.round(result.rps).toLocaleString('en-US')} req/s, server CPU ${Math.round(result.cpuPercent)} %, wrk ${Math.round(result.wrkCpuPercent)} %, other processes ${Math.round(result.otherCpuPercent)} %\n`,
        );
      }
    }
    await Promise.all(servers.map(stopServer));
    const macs = hotPathCrypto();
    const emitted = Number(/^EVENTS (\d+)$/m.exec(ours!.stdout.join('\n'))?.[1] ?? NaN);
    process.stdout.write('  timing the floor\'s pieces and the hand-written pieces in process\n');
    const floorPieces = await measureFloorPieces(nats.url, natsPid);

    const baseline = summarize(bare!.label, runs.get(bare!)!);
    const cookieRow = summarize(bareCookie!.label, runs.get(bareCookie!)!);
    const floorRow = summarize(floor!.label, runs.get(floor!)!);
    const row = summarize(ours!.label, runs.get(ours!)!);
    const cpu = (r: Row) => r['server CPU µs/req'] as number;
    const breakdown = floorBreakdownRows(floorPieces, macs.create + macs.visitor, {
      bare: cpu(baseline),
      bareWithCookie: cpu(cookieRow),
      floor: cpu(floorRow),
      floorNatsServer: median(runs.get(floor!)!.map((r) => r.natsCpuUsPerRequest)),
    });
    const pieces = measurePieces(cpu(row) * 1000);
    const ratio = (row['req/s'] as number) / (baseline['req/s'] as number);
    const floorRatio = (floorRow['req/s'] as number) / (baseline['req/s'] as number);
    baseline['x baseline'] = 1;
    cookieRow['x baseline'] = Number((cookieRow['req/s'] as number / (baseline['req/s'] as number)).toFixed(3));
    floorRow['x baseline'] = Number(floorRatio.toFixed(3));
    row['x baseline'] = Number(ratio.toFixed(3));
    const cpuRatio = (baseline['server CPU µs/req'] as number) / (row['server CPU µs/req'] as number);
    // wrk counts requests whose answers arrived; a few more may be in flight when it stops.
    const answered = runs.get(ours!)!.reduce((sum, r) => sum + r.answered, 0);
    const checks: Check[] = [
      {
        name: `redirector req/s >= ${TARGET_RATIO} x bare uWS`,
        pass: ratio >= TARGET_RATIO,
        detail: `${row['req/s']} vs ${baseline['req/s']} req/s = ${ratio.toFixed(3)} (median of ${ROUNDS} alternating rounds)`,
      },
      {
        name: 'a click id < 2 µs (ClickIdIssuer.issue, in-process, warm)',
        pass: macs.create < 2_000,
        detail: `${macs.create.toFixed(0)} ns`,
      },
      {
        name: 'every answered redirect emitted a click event',
        pass: emitted >= answered && emitted <= answered + 2 * ROUNDS * CONNECTIONS,
        detail: `${emitted} events for ${answered} answered requests`,
      },
      {
        name: 'no transport or status errors',
        pass: [baseline, cookieRow, floorRow, row].every((r) => r.errors === 0),
        detail: [baseline, cookieRow, floorRow, row].map((r) => `${r.name} ${r.errors}`).join(', '),
      },
    ];
    return {
      suite: name,
      rows: [baseline, cookieRow, floorRow, row],
      baseline,
      checks,
      tables: [
        { title: 'Where the floor server\'s CPU above bare uWS goes (per click)', rows: breakdown },
        { title: 'Hand-written pieces kept, vs the library each replaces (in process, per redirect that runs them)', rows: pieces },
      ],
      notes: [
        `wrk -t1 -c${CONNECTIONS}, ${WARMUP_SECONDS} s warmup + ${MEASURE_SECONDS} s measured per server per round, ${ROUNDS} rounds alternating; medians reported`,
        `requests rotate over all ${BENCH_LINK_COUNT.toLocaleString('en-US')} short codes, ${Object.keys(realUserAgents).length} User-Agents (incl. bots) and 256 public X-Forwarded-For addresses; no cookies (worst case: visitor hash + Set-Cookie every time)`,
        'link mix: 60 % plain, 10 % conversion tracking (clickId appended), 20 % 4 rules, 10 % 10 rules (geo, device, time, percentage)',
        `server CPU per request ratio (bare / ours) = ${cpuRatio.toFixed(3)}: the cost ratio independent of which process saturates first`,
        `"${FLOOR_LABEL}" (bench/servers/click-floor.ts): bare uWS plus only the per-click work DESIGN requires (click id MAC, visitor hash, Set-Cookie, one event to NATS), without rules, UA parsing or geo-IP: ${floorRatio.toFixed(3)} x baseline. Any redirector that does the rest as well stays below this line on this machine`,
        `at ${TARGET_RATIO} x baseline (${Math.round(TARGET_RATIO * (baseline['req/s'] as number)).toLocaleString('en-US')} req/s) a one-thread server has at most ${(1e6 / (TARGET_RATIO * (baseline['req/s'] as number))).toFixed(1)} µs of CPU per request; the floor spends ${floorRow['server CPU µs/req']} µs, the redirector ${row['server CPU µs/req']} µs`,
        'click events: batched by the real event publisher to NATS JetStream (a private nats-server on loopback), as in production',
        `nats-server CPU per redirect (median): ${median(runs.get(ours!)!.map((r) => r.natsCpuUsPerRequest)).toFixed(2)} µs, on the cores the servers and wrk share`,
        `"${COOKIE_LABEL}": the bare server writing a fixed Set-Cookie as long as a visitor cookie, for the floor breakdown`,
        '"Hand-written pieces kept": in process a piece\'s tables and code stay in cache, so these rows may understate what it saves in the server; the event JSON writer is the serializer the event\'s declaration builds (shared/schemas/event-json-writer.ts), timed against JSON.stringify',
        ...(Math.max(...[...runs.values()].flat().map((r) => r.otherCpuPercent)) > OTHER_CPU_WARNING_PERCENT
          ? [`WARNING: other processes used over ${OTHER_CPU_WARNING_PERCENT} % CPU during some rounds (column "other procs CPU % (max of rounds)", of all cores): those rounds competed for CPU, so req/s and the ratio are unreliable; rerun on a quiet machine`]
          : []),
        `in-process per call (best of 20 x 20k): ClickIdIssuer.issue ${macs.create.toFixed(0)} ns, verifyClickId ${macs.verify.toFixed(0)} ns, VisitorHasher.hash ${macs.visitor.toFixed(0)} ns`,
      ],
    };
  } finally {
    await Promise.all(servers.map(stopServer));
    await nats.destroy();
    await rm(dir, { recursive: true, force: true });
  }
}
