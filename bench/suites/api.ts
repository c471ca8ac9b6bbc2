/**
 * Management API rates: creating links, reading one link, reading a page of links,
 * each through the real API process (services/api/main.ts) on a fresh Postgres
 * database, with NATS (snapshot publishing) and the embedded ClickHouse endpoint
 * (link counters) as in production. Requests rotate over 32 Enterprise workspaces,
 * as a multi-tenant API sees them, each well inside its 10,000/h plan limit.
 * Baseline, same run, same generator: `GET /health` (Koa, no auth, no database).
 * No budget in DESIGN.md: the figures say what one API instance sustains here.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApiKey, createWorkspace } from '../../shared/db/workspaces.ts';
import { startChildService, type ChildService } from '../../shared/testing/child-service.ts';
import { createTestDatabase } from '../../shared/testing/test-database.ts';
import { freePort } from '../../shared/testing/free-port.ts';
import { startTestNatsServer } from '../../shared/testing/nats-server.ts';
import type { Check, Row, SuiteResult } from '../suite.ts';
import { requireWrk, runWrk, WRK_RESULT_LUA, wrkErrors, type WrkResult } from '../wrk.ts';
import { isConnectionRefused } from '../process-cpu.ts';

export const name = 'api';
export const description = 'API create / read / list rates through wrk vs GET /health (32 workspaces, Postgres, NATS, ClickHouse)';

const WORKSPACES = 32;
const LINKS_PER_WORKSPACE = 20;
const CONNECTIONS = 16;
const WARMUP_SECONDS = 2;
const MEASURE_SECONDS = 8;

const log = (line: string) => process.stdout.write(`  ${line}\n`);

interface Tenant {
  key: string;
  linkIds: string[];
}

const lua = (value: string) => JSON.stringify(value);

/** Requests prebuilt once per wrk thread, rotated in order: the generator spends its time on sockets. */
function script(requests: Array<{ method: string; path: string; key?: string; body?: string }>): string {
  const built = requests
    .map((r) => {
      const headers = r.key ? `{["Authorization"] = ${lua(`Bearer ${r.key}`)}, ["Content-Type"] = "application/json"}` : '{}';
      return `  wrk.format(${lua(r.method)}, ${lua(r.path)}, ${headers}${r.body ? `, ${lua(r.body)}` : ''}),`;
    })
    .join('\n');
  // Built in init(): before it, wrk.format does not know the Host header yet.
  return `
local requests = {}
init = function(args)
  requests = {
${built}
  }
end
local cursor = 0
request = function()
  cursor = (cursor % #requests) + 1
  return requests[cursor]
end
${WRK_RESULT_LUA}`;
}

function toRow(label: string, r: WrkResult, baselineRps?: number): Row {
  const rps = r.requests / (r.durationUs / 1e6);
  return {
    name: label,
    'req/s': Math.round(rps),
    'p50 ms': Number((r.p50Us / 1000).toFixed(2)),
    'p99 ms': Number((r.p99Us / 1000).toFixed(2)),
    errors: wrkErrors(r),
    'x baseline': baselineRps ? Number((rps / baselineRps).toFixed(3)) : 1,
  };
}

export async function run(): Promise<SuiteResult> {
  requireWrk();
  const dir = await mkdtemp(join(tmpdir(), 'linkroute-bench-api-'));
  const nats = await startTestNatsServer();
  const db = await createTestDatabase('postgres');
  const children: ChildService[] = [];
  try {
    const chPort = await freePort();
    const clickhouse = startChildService('services/clickhouse-embedded/main.ts', { DATA_DIR: join(dir, 'ch'), CLICKHOUSE_PORT: String(chPort), CLICKHOUSE_PASSWORD: 'bench' });
    children.push(clickhouse);
    await clickhouse.waitFor(/listening/, 60_000);
    const apiPort = await freePort();
    const api = startChildService('services/api/main.ts', {
      DATABASE_URL: db.url,
      NATS_URL: nats.url,
      CLICKHOUSE_URL: `http://default:bench@127.0.0.1:${chPort}`,
      API_PORT: String(apiPort),
      DATA_DIR: join(dir, 'api'),
      LOG_LEVEL: 'warn',
    });
    children.push(api);
    const base = `http://127.0.0.1:${apiPort}`;
    const deadline = Date.now() + 60_000;
    const readyStatus = () =>
      fetch(`${base}/ready`).then(
        (r) => r.status,
        (err: unknown) => {
          if (isConnectionRefused(err)) return 0; // not listening yet
          throw err;
        },
      );
    while ((await readyStatus()) !== 200) {
      if (Date.now() > deadline) throw new Error(`API not ready:\n${api.output}`);
      await new Promise((r) => setTimeout(r, 100));
    }

    log(`creating ${WORKSPACES} workspaces with ${LINKS_PER_WORKSPACE} links each`);
    const tenants: Tenant[] = [];
    for (let w = 0; w < WORKSPACES; w++) {
      const ws = await createWorkspace(db.sql, { name: `bench ${w}`, plan: 'enterprise' });
      const { key } = await createApiKey(db.sql, { workspaceId: ws.id });
      const linkIds: string[] = [];
      for (let i = 0; i < LINKS_PER_WORKSPACE; i++) {
        const res = await fetch(`${base}/links`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ destinationUrl: `https://example.com/seed/${w}/${i}`, title: `Seed ${i}` }),
        });
        if (res.status !== 201) throw new Error(`seeding a link answered ${res.status}: ${await res.text()}`);
        linkIds.push(((await res.json()) as { data: { id: string } }).data.id);
      }
      tenants.push({ key, linkIds });
    }

    const scenarios: Array<{ label: string; requests: Parameters<typeof script>[0] }> = [
      { label: 'GET /health (baseline)', requests: [{ method: 'GET', path: '/health' }] },
      {
        label: 'POST /links (create)',
        requests: Array.from({ length: 512 }, (_, i) => ({
          method: 'POST',
          path: '/links',
          key: tenants[i % WORKSPACES]!.key,
          body: JSON.stringify({ destinationUrl: `https://example.com/landing/${i}?utm_source=bench`, title: `Bench ${i}` }),
        })),
      },
      {
        label: 'GET /links/{id} (one link, with counters)',
        requests: Array.from({ length: 512 }, (_, i) => {
          const tenant = tenants[i % WORKSPACES]!;
          return { method: 'GET', path: `/links/${tenant.linkIds[(i >> 5) % LINKS_PER_WORKSPACE]}`, key: tenant.key };
        }),
      },
      {
        label: 'GET /links?limit=20 (a page, with counters)',
        requests: tenants.map((t) => ({ method: 'GET', path: '/links?limit=20', key: t.key })),
      },
    ];

    const rows: Row[] = [];
    let baselineRps = 0;
    for (const scenario of scenarios) {
      const file = join(dir, `${rows.length}.lua`);
      await writeFile(file, script(scenario.requests));
      await runWrk({ url: base, script: file, seconds: WARMUP_SECONDS, connections: CONNECTIONS });
      const result = await runWrk({ url: base, script: file, seconds: MEASURE_SECONDS, connections: CONNECTIONS });
      const row = toRow(scenario.label, result, baselineRps || undefined);
      if (!baselineRps) baselineRps = row['req/s'] as number;
      rows.push(row);
      log(`${scenario.label}: ${row['req/s']} req/s, p99 ${row['p99 ms']} ms, ${row.errors} errors`);
    }

    const [created] = await db.sql<{ n: number }[]>`SELECT count(*)::int AS n FROM links`;
    const checks: Check[] = [
      { name: 'no errors and no non-2xx answers', pass: rows.every((r) => r.errors === 0), detail: rows.map((r) => `${r.name}: ${r.errors}`).join('; ') },
    ];
    return {
      suite: name,
      rows,
      baseline: rows[0]!,
      checks,
      notes: [
        `wrk -t1 -c${CONNECTIONS}, ${WARMUP_SECONDS} s warmup + ${MEASURE_SECONDS} s measured per scenario; one API process; Postgres 127.0.0.1:5432 (fresh database), private nats-server, embedded ClickHouse as its own process`,
        `every authenticated request is also counted against its workspace's rolling rate-limit window in Postgres; ${created!.n.toLocaleString('en-US')} links stored at the end`,
      ],
    };
  } finally {
    for (const child of children.reverse()) await child.kill();
    await db.close();
    await nats.destroy();
    await rm(dir, { recursive: true, force: true });
  }
}
