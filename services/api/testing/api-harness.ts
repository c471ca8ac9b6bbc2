import { createTestDatabase, type Backend, type TestDatabase } from '../../../shared/testing/test-database.ts';
import { createApiKey, createWorkspace } from '../../../shared/db/workspaces.ts';
import { createLogger } from '../../../shared/logger.ts';
import type { Plan, Scope } from '../../../shared/schemas/common.ts';
import { createApiApp, type ApiDeps } from '../app.ts';
import { loadApiConfig } from '../config.ts';
import { listen } from '../server.ts';

/** The API in-process on a loopback port, over a fresh test database, driven by real HTTP. */
export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface RequestOptions {
  key?: string | null;
  body?: unknown;
  /** Sent as-is instead of JSON-encoding `body`. */
  rawBody?: string | Uint8Array;
  headers?: Record<string, string>;
}

export interface TestApi {
  url: string;
  db: TestDatabase;
  request<T = any>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  /** A new workspace and a key with all scopes (or the given ones). */
  tenant(options?: { plan?: Plan; scopes?: Scope[] }): Promise<{ workspaceId: string; key: string }>;
  close(): Promise<void>;
}

export const REDIRECT_BASE_URL = 'http://go.test:8080';

export async function startTestApi(
  backend: Backend,
  options: Pick<ApiDeps, 'counters' | 'analytics' | 'bus' | 'secret' | 'metrics' | 'now'> & Partial<Pick<ApiDeps, 'logger'>> & { /** More configuration, as environment variables. */ env?: Record<string, string> } = {},
): Promise<TestApi> {
  const db = await createTestDatabase(backend);
  const config = loadApiConfig({ REDIRECT_BASE_URL, API_MAX_BODY_BYTES: '65536', ...options.env });
  const { env: _env, ...deps } = options;
  const server = await listen(createApiApp({ sql: db.sql, config, logger: createLogger('api-test', 'silent'), ...deps }), 0, '127.0.0.1');

  return {
    url: server.url,
    db,
    async request(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers };
      if (options.key) headers.authorization = `Bearer ${options.key}`;
      let body: string | Uint8Array | undefined = options.rawBody;
      if (body === undefined && options.body !== undefined) {
        body = JSON.stringify(options.body);
        headers['content-type'] ??= 'application/json';
      }
      const response = await fetch(server.url + path, { method, headers, body });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch (err) {
        // Non-JSON bodies stay text, so a test can assert on them.
        if (!(err instanceof SyntaxError)) throw err;
      }
      return { status: response.status, headers: response.headers, body: parsed as any };
    },
    async tenant(options = {}) {
      const workspace = await createWorkspace(db.sql, { name: 'test tenant', plan: options.plan ?? 'enterprise' });
      const key = await createApiKey(db.sql, { workspaceId: workspace.id, ...(options.scopes ? { scopes: options.scopes } : {}) });
      return { workspaceId: workspace.id, key: key.key };
    },
    async close() {
      await server.close();
      options.counters?.stop(); // no more reading ahead from a test's ClickHouse
      await db.close();
    },
  };
}
