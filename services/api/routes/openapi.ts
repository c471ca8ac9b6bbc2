import type Router from '@koa/router';
import { docsPage, openApiDocument } from '../openapi/openapi-document.ts';
import { operations } from '../openapi/operations.ts';

/** `/openapi.json` and `/docs`, public like /health; built once per host the API is reached on. */
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
  router.get('/docs', (ctx) => {
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'");
    ctx.body = docsPage(documentFor(`${ctx.protocol}://${ctx.host}`));
  });
}
