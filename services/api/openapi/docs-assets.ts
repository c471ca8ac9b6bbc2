import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { Context, Next } from 'koa';

/**
 * The rendered API reference: /docs is a page of ours (docs-page/) that runs Swagger
 * UI (swagger-ui-dist, a dependency, served from node_modules by this API: no CDN)
 * on /openapi.json, with its console to try requests against this API. Only the
 * files named here are served, read on first use and kept in memory with a gzip copy
 * (about 2 MB, shared by every app of the process): no path from a URL reaches the disk.
 */
export const DOCS_PATH = '/docs';

/**
 * What the page may do: scripts and styles from this origin only (Swagger UI sets
 * styles through the DOM, which CSP allows, so no 'unsafe-inline'), images inline
 * (data:, its icons), requests (the document, the console's calls) to this origin.
 * The browser test fails on any refusal, so this is as much as it needs.
 */
export const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const swaggerUi = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
const page = fileURLToPath(new URL('./docs-page/', import.meta.url));

const files: Record<string, { path: string; type: string }> = {
  '': { path: join(page, 'index.html'), type: 'text/html; charset=utf-8' },
  '/docs.js': { path: join(page, 'docs.js'), type: 'text/javascript; charset=utf-8' },
  '/swagger-ui-bundle.js': { path: join(swaggerUi, 'swagger-ui-bundle.js'), type: 'text/javascript; charset=utf-8' },
  '/swagger-ui.css': { path: join(swaggerUi, 'swagger-ui.css'), type: 'text/css; charset=utf-8' },
};

const loaded = new Map<string, { body: Buffer; gzip: Buffer; type: string }>();

function load(name: string): { body: Buffer; gzip: Buffer; type: string } | undefined {
  const file = files[name];
  if (!file) return undefined;
  let asset = loaded.get(name);
  if (!asset) {
    const body = readFileSync(file.path);
    asset = { body, gzip: gzipSync(body), type: file.type };
    loaded.set(name, asset);
  }
  return asset;
}

/** Sends `/docs` + `name` ('' for the page); false when there is no such file. */
export function sendDocsFile(ctx: Context, name: string): boolean {
  const asset = load(name);
  if (!asset) return false;
  ctx.set('Content-Security-Policy', DOCS_CSP);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  // The page names its files without a version: revalidate, so an upgrade shows at once.
  ctx.set('Cache-Control', 'no-cache');
  ctx.vary('Accept-Encoding');
  ctx.type = asset.type;
  if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
    ctx.set('Content-Encoding', 'gzip');
    ctx.body = asset.gzip;
  } else {
    ctx.body = asset.body;
  }
  return true;
}

/** Serves the page's files under /docs/ (the page itself is the /docs route). */
export function docsAssets() {
  return async function serveDocsAssets(ctx: Context, next: Next): Promise<void> {
    if (!ctx.path.startsWith(`${DOCS_PATH}/`) || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    if (!sendDocsFile(ctx, ctx.path.slice(DOCS_PATH.length))) return next();
  };
}
