import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../../shared/testing/free-port.ts';
import { seedEmbeddedPostgres } from '../../../shared/testing/seed-embedded-postgres.ts';
import { startChildService, type ChildService } from '../../../shared/testing/child-service.ts';

/**
 * linkroute as `npm start` runs it (services/all-in-one: API, redirector,
 * ingester, embedded Postgres and ClickHouse) in a child process on free ports,
 * with the country taken from a trusted proxy header so visitors can come
 * "from" any country on loopback. Its DATA_DIR starts with the run's migrated
 * embedded Postgres (seed-embedded-postgres.ts): a first start's initdb is not what
 * these tests are about.
 */
export const COUNTRY_HEADER = 'x-test-country';

export interface LinkrouteProcess {
  apiUrl: string;
  redirectUrl: string;
  /** The first workspace's key, as the start banner prints it. */
  apiKey: string;
  /** Its DATA_DIR: the CLI (or openDatabase) attaches to the embedded Postgres it serves through this. */
  dataDir: string;
  service: ChildService;
  stop(): Promise<void>;
}

/** Ports are picked free, then bound by the child: another process may take one in between. */
const START_ATTEMPTS = 3;

export async function startLinkroute(env: Record<string, string> = {}): Promise<LinkrouteProcess> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(env);
    } catch (err) {
      if (!(err instanceof PortTaken) || attempt === START_ATTEMPTS) throw err;
    }
  }
}

/** A port picked free was taken by someone else before the child listened on it. */
class PortTaken extends Error {
  constructor(output: string) {
    super(`a port picked free was taken before linkroute listened on it:\n${output}`);
    this.name = 'PortTaken';
  }
}

async function startOnce(env: Record<string, string>): Promise<LinkrouteProcess> {
  const dataDir = await mkdtemp(join(tmpdir(), 'linkroute-dashboard-'));
  const [apiPort, redirectPort] = [await freePort(), await freePort()];
  const redirectUrl = `http://127.0.0.1:${redirectPort}`;
  let service: ChildService;
  try {
    await seedEmbeddedPostgres(dataDir);
    service = startChildService('services/all-in-one/main.ts', {
      DATA_DIR: dataDir,
      API_PORT: String(apiPort),
      REDIRECT_PORT: String(redirectPort),
      // Any free port: several of these may run at once.
      ADMIN_PORT: '0',
      REDIRECT_BASE_URL: redirectUrl,
      TRUSTED_COUNTRY_HEADER: COUNTRY_HEADER,
      LOG_LEVEL: 'warn',
      ...env,
    }, { compiled: true });
  } catch (err) {
    // Nothing started (a dist/ older than the sources, say): the data dir goes too.
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
  const stop = async () => {
    await service.kill('SIGTERM');
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    await service.waitFor(/linkroute dashboard on http/, 120_000);
  } catch (err) {
    await stop();
    throw /could not listen on|EADDRINUSE/.test(service.output) ? new PortTaken(service.output) : err;
  }
  const apiKey = /LINKROUTE_API_KEY=(lr_live_\w+)/.exec(service.output)?.[1];
  if (!apiKey) {
    await stop();
    throw new Error(`no API key in the start banner:\n${service.output}`);
  }
  return { apiUrl: `http://127.0.0.1:${apiPort}`, redirectUrl, apiKey, dataDir, service, stop };
}
