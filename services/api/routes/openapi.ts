import type Router from '@koa/router';
import { DOCS_PATH, sendDocsFile } from '../openapi/docs-assets.ts';
import { openApiDocument } from '../openapi/openapi-document.ts';
import { operations } from '../openapi/operations.ts';

/**
 * `/openapi.json` and `/docs` (the reference rendered by Swagger UI, whose files
 * openapi/docs-assets.ts serves under /docs/), public like /health. The document is
 * built once (a few hundred ms: every schema converted) on first request; each
 * answer names as its server the host the API was reached on, so a console's
 * requests go where the reader is.
 */
export function openApiRoutes(router: Router): void {
  let document: Record<string, unknown> | undefined;
  router.get('/openapi.json', (ctx) => {
    document ??= openApiDocument(operations, '');
    ctx.body = { ...document, servers: [{ url: `${ctx.protocol}://${ctx.host}` }] };
  });
  router.get(DOCS_PATH, (ctx) => {
    sendDocsFile(ctx, '');
  });
}
