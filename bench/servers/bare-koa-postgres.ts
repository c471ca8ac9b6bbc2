/**
 * Baseline for the API benchmark: bare Koa with postgres.js (the same pool size as
 * the API), doing the API's statements for a link and nothing else: no auth, no rate
 * limit, no validation library, no counters, no publishing. The workspace and its
 * campaign come in headers (X-Workspace-Id, X-Campaign-Id). Routes:
 *   GET  /health            {"status":"ok"}
 *   POST /links             insert one link ({destinationUrl, title}), answer the row
 *   GET  /links/:id         the row
 *   GET  /links?limit=20    count and newest page in one statement, as the API lists (link-store.ts)
 * Env: DATABASE_URL, PORT. Prints `READY <port>` once listening; exits on SIGTERM.
 */
import { randomBytes } from 'node:crypto';
import Koa from 'koa';
import { connectPostgres } from '../../shared/db/postgres.ts';
import { newId } from '../../shared/ids.ts';

const sql = connectPostgres(process.env.DATABASE_URL!, { max: 10, applicationName: 'bench-bare-koa' });
const app = new Koa();

async function body(req: NodeJS.ReadableStream): Promise<{ destinationUrl: string; title?: string }> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8')) as { destinationUrl: string; title?: string };
}

app.use(async (ctx) => {
  const workspaceId = ctx.get('x-workspace-id');
  if (ctx.path === '/health') {
    ctx.body = { status: 'ok' };
  } else if (ctx.method === 'POST' && ctx.path === '/links') {
    const input = await body(ctx.req);
    const [row] = await sql`
      INSERT INTO links (id, workspace_id, campaign_id, domain_key, short_code, destination_url, title)
      VALUES (${newId('link')}, ${workspaceId}, ${ctx.get('x-campaign-id')}, '', ${randomBytes(6).toString('base64url')}, ${input.destinationUrl}, ${input.title ?? ''})
      RETURNING *`;
    ctx.status = 201;
    ctx.body = { success: true, data: row };
  } else if (ctx.method === 'GET' && ctx.path === '/links') {
    const limit = Number(ctx.query.limit ?? 20);
    // The API's statement shape: the total and the page in one round trip; a page past the end is one row of nulls.
    const rows = await sql<Array<{ id: string | null; total: number }>>`
      SELECT c.total, p.* FROM (SELECT count(*)::int AS total FROM links WHERE workspace_id = ${workspaceId} AND deleted_at IS NULL) c
      LEFT JOIN (SELECT * FROM links WHERE workspace_id = ${workspaceId} AND deleted_at IS NULL ORDER BY created_at DESC, id DESC LIMIT ${limit}) p ON true
      ORDER BY p.created_at DESC, p.id DESC`;
    ctx.body = { success: true, data: rows[0]!.id === null ? [] : rows, pagination: { page: 1, limit, total: rows[0]!.total } };
  } else if (ctx.method === 'GET' && ctx.path.startsWith('/links/')) {
    const [row] = await sql`SELECT * FROM links WHERE id = ${ctx.path.slice('/links/'.length)} AND workspace_id = ${workspaceId}`;
    ctx.status = row ? 200 : 404;
    ctx.body = { success: Boolean(row), data: row ?? null };
  } else {
    ctx.status = 404;
  }
});

const server = app.listen(0, '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`READY ${typeof address === 'object' && address ? address.port : 0}\n`);
});
process.once('SIGTERM', () => {
  server.close();
  void sql.end({ timeout: 2 }).then(() => process.exit(0));
});
