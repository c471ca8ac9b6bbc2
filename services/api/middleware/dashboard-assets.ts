import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import type { Context, Next } from 'koa';
import { AppError } from '../../../shared/errors.ts';

/**
 * Serves the dashboard's built assets (services/dashboard, built by `npm install`)
 * at /dashboard, and sends `/` there. The build is read once at start into memory
 * (a few hundred KB), with the gzip copies the build wrote beside each file: no
 * file system access per request, and no path from a URL ever reaches the disk.
 * Any /dashboard/... path that is not a file is a page of the app (client-side
 * routes), so it gets index.html.
 */
export const DASHBOARD_PATH = '/dashboard';

interface Asset {
  body: Buffer;
  gzip: Buffer | undefined;
  type: string;
  /** Vite names assets by content hash: they never change under one name. */
  immutable: boolean;
}

const types: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.webmanifest': 'application/manifest+json',
};

// The app talks only to this origin's API; QR previews are data: URIs, charts draw on canvas.
const CSP = "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

function readAssets(dir: string): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  if (!existsSync(join(dir, 'index.html'))) return assets;
  const walk = (folder: string) => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (!entry.name.endsWith('.gz')) {
        const name = relative(dir, path).split('\\').join('/');
        const gzipPath = `${path}.gz`;
        assets.set(`/${name}`, {
          body: readFileSync(path),
          gzip: existsSync(gzipPath) ? readFileSync(gzipPath) : undefined,
          type: types[extname(name)] ?? 'application/octet-stream',
          immutable: name.startsWith('assets/'),
        });
      }
    }
  };
  walk(dir);
  return assets;
}

const notBuiltPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>linkroute dashboard</title></head>
<body style="font:16px system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem"><h1>The dashboard is not built</h1>
<p><code>npm install</code> builds it; to build it again, run <code>npm run build:dashboard</code> and restart the API.</p></body></html>`;

export function dashboardAssets(dir: string) {
  const assets = readAssets(dir);
  const index = assets.get('/index.html');

  function send(ctx: Context, asset: Asset): void {
    ctx.set('Content-Security-Policy', CSP);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Cache-Control', asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
    ctx.vary('Accept-Encoding');
    ctx.type = asset.type;
    if (asset.gzip && ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
      ctx.set('Content-Encoding', 'gzip');
      ctx.body = asset.gzip;
    } else {
      ctx.body = asset.body;
    }
  }

  return async function serveDashboard(ctx: Context, next: Next): Promise<void> {
    const inDashboard = ctx.path === DASHBOARD_PATH || ctx.path.startsWith(`${DASHBOARD_PATH}/`);
    if (ctx.path !== '/' && !inDashboard) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.set('Allow', 'GET, HEAD');
      throw new AppError('METHOD_NOT_ALLOWED', 'The dashboard is read with GET');
    }
    if (ctx.path === '/') {
      ctx.status = 302;
      ctx.redirect(`${DASHBOARD_PATH}/`);
      return;
    }
    if (!index) {
      ctx.status = 503;
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = notBuiltPage;
      return;
    }
    const sub = ctx.path.slice(DASHBOARD_PATH.length) || '/';
    const asset = assets.get(sub);
    if (asset) return send(ctx, asset);
    // A missing file (a stale hashed asset, a typo) is a 404, not the app's HTML in its place.
    if (/\.[a-z0-9]+$/i.test(sub)) throw new AppError('NOT_FOUND', `No dashboard file ${ctx.path}`);
    send(ctx, index);
  };
}
