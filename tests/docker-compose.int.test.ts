import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { apiEnv, loadApiConfig } from '../services/api/config.ts';
import { ingesterEnv, loadIngesterConfig } from '../services/ingester/config.ts';
import { loadRedirectorConfig, redirectorEnv } from '../services/redirector/config.ts';
import { loadWebhooksConfig, webhooksEnv } from '../services/webhooks/config.ts';
import { natsTarget, natsUrlEnv } from '../shared/config/nats-env.ts';
import { runCommand } from '../shared/testing/run-command.ts';

const parseNatsEnv = (url: string) => ({ NATS_URL: natsUrlEnv.parse(url) });

/**
 * docker-compose.yml cannot run here (no Docker engine), so this keeps it true:
 * each linkroute service's environment uses only variables that service reads,
 * and they parse with the service's own config schema.
 */
const services: Record<string, { schema: z.ZodObject | z.ZodPipe<z.ZodObject>; load: (env: Record<string, string>) => unknown; readyPort: string; publicPort?: string }> = {
  // The API's /ready is public (it shows no tenant's data); its /metrics is on ADMIN_PORT.
  'start:api': { schema: apiEnv, load: loadApiConfig, readyPort: 'API_PORT', publicPort: 'API_PORT' },
  // A redirector's public port answers redirect routes only: /ready is on ADMIN_PORT.
  'start:redirector': { schema: redirectorEnv, load: loadRedirectorConfig, readyPort: 'ADMIN_PORT', publicPort: 'REDIRECT_PORT' },
  'start:ingester': { schema: ingesterEnv, load: loadIngesterConfig, readyPort: 'INGEST_PORT' },
  'start:webhooks': { schema: webhooksEnv, load: loadWebhooksConfig, readyPort: 'WEBHOOKS_PORT' },
};

/** The operator's environment the file is read with: what the README says to set first. */
const operatorEnv: Record<string, string> = { LINKROUTE_SECRET: 'a'.repeat(64), NATS_PASSWORD: 'operator-nats-password' };

/**
 * `${NAME:-default}` and `${NAME:?message}` as Compose substitutes them: the variable when
 * set and not empty, else the default, or for `:?` the refusal to start with the message.
 */
const substitute = (value: string, env: Record<string, string> = operatorEnv) =>
  value.replace(/\$\{(\w+):([-?])([^}]*)\}/g, (_, name: string, kind: string, rest: string) => {
    const set = env[name];
    if (set !== undefined && set !== '') return set;
    if (kind === '?') throw new Error(`compose refuses to start: ${name}: ${rest}`);
    return rest;
  });

describe('docker-compose.yml', () => {
  it('runs each service with only the environment it reads, valid for its schema', async () => {
    const compose = parse(await readFile(new URL('../docker-compose.yml', import.meta.url), 'utf8'), { merge: true }) as {
      services: Record<string, { command?: string[]; environment?: Record<string, string>; build?: string; image?: string; healthcheck?: { test: string[] }; ports?: string[] }>;
      configs?: Record<string, { content?: string }>;
    };
    const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };
    const ours = Object.entries(compose.services).filter(([, s]) => s.build);
    expect(ours.map(([name]) => name).sort()).toEqual(['api', 'ingester', 'redirector-1', 'redirector-2', 'webhooks']);
    for (const [name, service] of ours) {
      // Containers run the compiled service as `npm run start:*` does (its script execs node), without npm in between.
      const command = service.command?.join(' ') ?? '';
      expect(command, `${name} command`).toMatch(/^node dist\//);
      const script = Object.keys(services).find((s) => pkg.scripts[s] === `exec ${command}`) ?? '';
      const known = services[script];
      expect(known, `${name}: unknown command ${service.command}`).toBeDefined();
      const env = Object.fromEntries(Object.entries(service.environment ?? {}).map(([k, v]) => [k, substitute(String(v))]));
      // A schema may end in a transform (defaults computed from other variables): its object is the pipe's input.
      const shape = known!.schema instanceof z.ZodPipe ? known!.schema.in.shape : known!.schema.shape;
      const unknown = Object.keys(env).filter((k) => !(k in shape));
      expect(unknown, `${name} sets variables it does not read`).toEqual([]);
      expect(() => known!.load(env), name).not.toThrow();
      // The healthcheck asks /ready on the port the service was told to answer it on.
      const probe = service.healthcheck?.test.join(' ') ?? '';
      expect(probe, `${name} healthcheck`).toContain(`http://127.0.0.1:${env[known!.readyPort]}/ready`);
      if (known!.publicPort) {
        // Only the public port is published; the admin port stays on the container's loopback.
        expect((service.ports ?? []).map((p) => p.split(':').at(-1)), `${name} ports`).toEqual([env[known!.publicPort]]);
        expect(env.ADMIN_HOST, `${name} ADMIN_HOST`).toBe('127.0.0.1');
        expect(env.ADMIN_PORT, `${name} ADMIN_PORT`).not.toBe(env[known!.publicPort]);
      }
    }
    expect(Object.keys(compose.services)).toEqual(expect.arrayContaining(['postgres', 'nats', 'clickhouse']));

    // NATS takes no anonymous clients, and every service connects as the user it configures.
    const natsConfig = substitute(compose.configs?.['nats-server']?.content ?? '');
    const [, user, password] = /user: "([^"]+)", password: "([^"]+)"/.exec(natsConfig) ?? [];
    expect(user, 'a NATS user in configs.nats-server').toBeDefined();
    for (const [name, service] of ours) {
      const target = natsTarget(parseNatsEnv(substitute(String(service.environment?.NATS_URL ?? ''))));
      expect(target?.auth, `${name} NATS credentials`).toEqual({ kind: 'user', user, pass: password });
    }
    expect(compose.services.nats?.command?.join(' ')).toContain('-c /etc/nats/nats-server.conf');
    // The configuration is one nats-server accepts.
    const dir = await mkdtemp(join(tmpdir(), 'linkroute-compose-nats-'));
    try {
      await writeFile(join(dir, 'nats-server.conf'), natsConfig);
      const checked = await runCommand('/usr/sbin/nats-server', ['-t', '-c', join(dir, 'nats-server.conf')], { timeoutMs: 10_000 });
      expect(checked.code, checked.stderr + checked.stdout).toBe(0);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    for (const script of Object.keys(services)) expect(pkg.scripts[script], script).toBeDefined();
  });

  it('refuses to start without LINKROUTE_SECRET or NATS_PASSWORD: no default anyone could know', async () => {
    const text = await readFile(new URL('../docker-compose.yml', import.meta.url), 'utf8');
    const compose = parse(text, { merge: true }) as { services: Record<string, { environment?: Record<string, string> }>; configs?: Record<string, { content?: string }> };
    for (const missing of ['LINKROUTE_SECRET', 'NATS_PASSWORD']) {
      const env = { ...operatorEnv };
      delete env[missing];
      const values = [...Object.values(compose.services).flatMap((s) => Object.values(s.environment ?? {}).map(String)), compose.configs?.['nats-server']?.content ?? ''];
      expect(() => values.forEach((v) => substitute(v, env)), missing).toThrow(new RegExp(`refuses to start: ${missing}`));
      expect(() => values.forEach((v) => substitute(v, { ...env, [missing]: '' })), `${missing} empty`).toThrow(/refuses to start/);
    }
    // Every use of either is the refusing form: no default, and no form that passes an empty value.
    for (const [, name, form] of text.matchAll(/\$\{(LINKROUTE_SECRET|NATS_PASSWORD)([^}]*)\}/g)) expect(form!.startsWith(':?'), `\${${name}${form}}`).toBe(true);
    expect(text.match(/\$\{(LINKROUTE_SECRET|NATS_PASSWORD)/g)?.length).toBeGreaterThanOrEqual(3);
  });
});
