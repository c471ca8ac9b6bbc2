import type Router from '@koa/router';
import { DOCS_PATH, sendDocsFile } from '../openapi/docs-assets.ts';
import { openApiDocument } from '../openapi/openapi-document.ts';
import { operations } from '../openapi/operations.ts';

/**
 * `/openapi.json` and `/docs` (the reference rendered by Swagger UI, whose files
 * openapi/docs-assets.ts serves under /docs/), public like /health. The document is
 * built once per host the API is reached on, so its server is where the reader is.
 */
export function openApiRoutes(router: Router): void {
  const byServer = new Map<string, Record<string, unknown>>();
  const documentFor = (server: string) => {
    let document = byServer.get(server);
    if (!document) {
      document = openApiDocument(operations, server);
      if (byServer.size < 16) byServer.set(server, document);
    }
    return document;
  };
  router.get('/openapi.json', (ctx) => {
    ctx.body = documentFor(`${ctx.protocol}://${ctx.host}`);
  });
  router.get(DOCS_PATH, (ctx) => {
    sendDocsFile(ctx, '');
  });
}
