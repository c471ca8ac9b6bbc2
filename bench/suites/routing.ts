/**
 * Routing engine micro-benchmarks: decide() by rule count, and the request-fact helpers
 * a redirector calls per request (UA parse, IP -> place, visitor bucket).
 *
 * Every task runs BATCH operations per tinybench sample so the timer's own cost
 * (~30-50 ns per read) does not swamp sub-microsecond operations; reported ns are per
 * operation (sample latency / batch). Caches are warm: the timed phase follows warmup.
 * Acceptance (issue): decide() for a link with 10 mixed rules < 2 µs median.
 */
import { randomUUID } from 'node:crypto';
import { Bench } from 'tinybench';
import { GeoIp } from '../../shared/request-facts/geo-ip.ts';
import { realUserAgents } from '../../shared/request-facts/sample-user-agents.ts';
import { parseUserAgent } from '../../shared/request-facts/user-agent.ts';
import { UserAgentWorkCache } from '../../services/redirector/serving/user-agent-work.ts';
import { decide } from '../../shared/routing/decide.ts';
import { makeFacts, makeLink, makeRule } from '../../shared/routing/fixtures.ts';
import { routableLink } from '../../shared/routing/hydrate.ts';
import type { RequestFacts, RoutableLink, RuleRecord } from '../../shared/routing/types.ts';
import { visitorBucket } from '../../shared/routing/visitor-bucket.ts';
import type { Check, Row, SuiteResult } from '../suite.ts';
import { mulberry32 } from '../../shared/testing/seeded-random.ts';

export const name = 'routing';
export const description = 'routing engine decide() by rule count, UA parsing, IP -> place (country, region, city), visitor bucket';

const TASK_TIME_MS = 500;
const ACCEPTANCE_NS = 2_000;
const NOW = Date.parse('2026-03-04T12:00:00Z'); // a Wednesday

/** The "worst case" visitor: matches none of the mixed rules except the last one. */
const worstFacts: RequestFacts = makeFacts({ now: NOW, country: 'US', deviceClass: 'desktop', os: 'windows', bucket: 99.5 });

/**
 * n rules cycling geo / device / time / percentage, highest priority first. None match
 * worstFacts except the last (geo in US), so decide() evaluates all n.
 */
function mixedRules(n: number): RuleRecord[] {
  const nonMatching: Array<() => RuleRecord> = [
    () => makeRule('geo', { countries: ['FR', 'DE', 'ES', 'IT', 'NL'], operator: 'in' }),
    () => makeRule('device', { devices: ['mobile', 'tablet'] }),
    () => makeRule('time', { timezone: 'Europe/Berlin', days: ['saturday', 'sunday'], startTime: '10:00', endTime: '18:00' }),
    () => makeRule('percentage', { percentage: 1 }),
    () => makeRule('geo', { countries: ['US', 'CA'], operator: 'not_in' }),
    () => makeRule('device', { devices: ['mobile'], os: ['ios', 'android'] }),
    () => makeRule('time', { timezone: 'America/New_York', days: ['friday', 'saturday'], startTime: '22:00', endTime: '04:00' }),
    () => makeRule('time', { timezone: 'Asia/Tokyo', days: ['monday'], startTime: '00:00', endTime: '06:00' }),
  ];
  const rules: RuleRecord[] = [];
  for (let i = 0; i < n - 1; i++) rules.push({ ...nonMatching[i % nonMatching.length]!(), priority: 100 - i });
  rules.push({ ...makeRule('geo', { countries: ['US'], operator: 'in' }), priority: 1, linkId: null });
  return rules;
}

function linkWith(rules: RuleRecord[]): RoutableLink {
  return routableLink(makeLink(), rules.filter((r) => r.linkId !== null), rules.filter((r) => r.linkId === null));
}

/** A varied crowd at one instant (so time rules see one 15-minute slot, as in production). */
function typicalFacts(count: number): RequestFacts[] {
  const random = mulberry32(42);
  const countries = ['US', 'US', 'GB', 'DE', 'FR', 'IN', 'BR', 'JP', 'CA', null];
  const devices = [
    ['mobile', 'ios'],
    ['mobile', 'android'],
    ['mobile', 'android'],
    ['tablet', 'ios'],
    ['desktop', 'windows'],
    ['desktop', 'macos'],
    ['desktop', 'linux'],
    ['desktop', null],
  ] as const;
  return Array.from({ length: count }, () => {
    const [deviceClass, os] = devices[Math.floor(random() * devices.length)]!;
    return makeFacts({
      now: NOW + Math.floor(random() * 60_000),
      country: countries[Math.floor(random() * countries.length)]!,
      deviceClass,
      os,
      bucket: visitorBucket(randomUUID(), 'link_1'),
    });
  });
}

function publicIpv4s(count: number): string[] {
  const random = mulberry32(7);
  const ips: string[] = [];
  while (ips.length < count) {
    const a = 1 + Math.floor(random() * 222);
    if (a === 10 || a === 127 || a === 100 || a === 169 || a === 172 || a === 192) continue;
    ips.push(`${a}.${Math.floor(random() * 256)}.${Math.floor(random() * 256)}.${1 + Math.floor(random() * 254)}`);
  }
  return ips;
}

function publicIpv6s(count: number): string[] {
  const random = mulberry32(9);
  // Prefixes of large real allocations (Google, Meta, Cloudflare, Akamai, RIPE/APNIC/LACNIC/AFRINIC users).
  const prefixes = ['2001:4860', '2a03:2880', '2606:4700', '2600:1400', '2a00:1450', '2400:cb00', '2800:3f0', '2c0f:fb50', '2001:67c', '2404:6800'];
  const group = () => Math.floor(random() * 0x10000).toString(16);
  return Array.from({ length: count }, (_, i) => `${prefixes[i % prefixes.length]}:${group()}:${group()}::${group()}`);
}

interface Task {
  name: string;
  batch: number;
  op: () => number;
}

/** Results are folded in here so the optimiser cannot drop the benchmarked calls. */
export let sink = 0;

export async function run(): Promise<SuiteResult> {
  const geoStarted = performance.now();
  const geo = GeoIp.open();
  const geoLoadMs = performance.now() - geoStarted;
  const uas = Object.values(realUserAgents);
  const ipv4s = publicIpv4s(256);
  const ipv6s = publicIpv6s(256);
  // More addresses than GeoIp keeps: each is looked up in the files, the cost of a crowd.
  const ipv4sMany = publicIpv4s(100_000);
  const ipv6sMany = publicIpv6s(100_000);
  const visitors = Array.from({ length: 256 }, () => randomUUID());
  const crowd = typicalFacts(256);
  const links = {
    0: linkWith([]),
    1: linkWith(mixedRules(1)),
    10: linkWith(mixedRules(10)),
    50: linkWith(mixedRules(50)),
  };
  for (const [count, link] of Object.entries(links)) {
    const decision = decide(link, worstFacts);
    const expected = count === '0' ? null : link.compiled.rules.at(-1)!.id;
    if (decision.kind !== 'redirect' || decision.ruleId !== expected) throw new Error(`bench setup: ${count} rules decided ${JSON.stringify(decision)}`);
  }

  let i = 0;
  let many = 0;
  const next = () => (i = (i + 1) & 255);
  const kind = (d: { kind: string }) => d.kind.length;
  const userAgents = new UserAgentWorkCache();
  const tasks: Task[] = [
    { name: 'decide: 0 rules (baseline)', batch: 1000, op: () => kind(decide(links[0], worstFacts)) },
    { name: 'decide: 1 rule', batch: 1000, op: () => kind(decide(links[1], worstFacts)) },
    { name: 'decide: 10 mixed rules, worst case', batch: 1000, op: () => kind(decide(links[10], worstFacts)) },
    { name: 'decide: 10 mixed rules, typical crowd', batch: 1000, op: () => kind(decide(links[10], crowd[next()]!)) },
    { name: 'decide: 50 mixed rules, worst case', batch: 1000, op: () => kind(decide(links[50], worstFacts)) },
    { name: 'decide: 50 mixed rules, typical crowd', batch: 1000, op: () => kind(decide(links[50], crowd[next()]!)) },
    { name: 'visitorBucket (uuid, link id)', batch: 1000, op: () => visitorBucket(visitors[next()]!, 'link_8f2kq9x1') },
    { name: `User-Agent, cached (the redirector's UserAgentWorkCache, ${uas.length} UAs)`, batch: 1000, op: () => userAgents.get(uas[next() % uas.length]!).facts.deviceClass.length },
    { name: `parseUserAgent uncached (${uas.length} UAs)`, batch: 20, op: () => parseUserAgent(uas[next() % uas.length]!).deviceClass.length },
    { name: 'geo-IP place IPv4, 256 repeated IPs (address cache)', batch: 1000, op: () => geo.lookup(ipv4s[next()]!).country?.length ?? 0 },
    { name: 'geo-IP place IPv6, 256 repeated IPs (address cache)', batch: 1000, op: () => geo.lookup(ipv6s[next()]!).country?.length ?? 0 },
    { name: `geo-IP place IPv6, ${ipv6sMany.length.toLocaleString('en-US')} IPs in turn (every one a file lookup)`, batch: 100, op: () => geo.lookup(ipv6sMany[(many = (many + 1) % ipv6sMany.length)]!).country?.length ?? 0 },
    { name: `geo-IP place IPv4, ${ipv4sMany.length.toLocaleString('en-US')} IPs in turn (every one a file lookup)`, batch: 1000, op: () => geo.lookup(ipv4sMany[(many = (many + 1) % ipv4sMany.length)]!).country?.length ?? 0 },
    {
      name: 'per request: UA + country + bucket + decide(10)',
      batch: 1000,
      op: () => {
        const n = next();
        const ua = userAgents.get(uas[n % uas.length]!).facts;
        const facts: RequestFacts = {
          now: NOW,
          country: geo.lookup(ipv4s[n]!).country,
          deviceClass: ua.deviceClass,
          os: ua.os,
          bucket: visitorBucket(visitors[n]!, 'link_1'),
          clicks: 0,
        };
        return kind(decide(links[10], facts));
      },
    },
  ];

  const bench = new Bench({ time: TASK_TIME_MS, warmupTime: 100 });
  for (const task of tasks) {
    bench.add(task.name, () => {
      let acc = 0;
      for (let k = 0; k < task.batch; k++) acc += task.op();
      sink += acc;
    });
  }
  bench.addEventListener('cycle', (event) => {
    const task = event.task;
    if (task) process.stdout.write(`  done: ${task.name}\n`);
  });
  await bench.run();

  const rows: Row[] = bench.tasks.map((task, index) => {
    const result = task.result;
    if (result.state !== 'completed') throw new Error(`${task.name}: ${result.state}`);
    const batch = tasks[index]!.batch;
    const meanNs = (result.latency.mean * 1e6) / batch;
    const p50Ns = (result.latency.p50 * 1e6) / batch;
    return {
      name: task.name,
      'ops/s': Math.round(1e9 / meanNs),
      'mean ns': Math.round(meanNs),
      'p50 ns': Math.round(p50Ns),
      'rme %': Number(result.latency.rme.toFixed(2)),
      samples: result.latency.samplesCount,
    };
  });
  const baseline = rows[0]!;
  for (const row of rows) row['x baseline'] = Number(((row['p50 ns'] as number) / (baseline['p50 ns'] as number)).toFixed(2));

  const tenWorst = rows.find((row) => row.name === 'decide: 10 mixed rules, worst case')!;
  const checks: Check[] = [
    {
      name: 'decide() with 10 mixed rules < 2 µs median (warm caches)',
      pass: (tenWorst['p50 ns'] as number) < ACCEPTANCE_NS,
      detail: `${String(tenWorst['p50 ns'])} ns median (worst case: all 10 rules evaluated)`,
    },
  ];
  return {
    suite: name,
    rows,
    baseline,
    checks,
    notes: [
      `ns are per operation: each sample runs a batch (1000 ops; 20 for uncached UA parsing, 100 for the IPv6 file lookups) to keep timer overhead out; x baseline = p50 / baseline p50`,
      `worst case: visitor matches only the last rule; typical crowd: 256 varied visitors (country, device, bucket) at one instant`,
      `geo-IP database (DB-IP city lite, IPv4 + IPv6) load: ${geoLoadMs.toFixed(0)} ms (once per redirector process, at start)`,
    ],
  };
}
