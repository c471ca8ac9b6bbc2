import { z } from 'zod';
import { errorStatus } from '../../../shared/errors.ts';
import type { Operation } from './operations.ts';

type JsonSchema = Record<string, unknown>;

/** JSON Schema of what a client sends (input) or receives (output); refinements are not representable, so they are omitted. */
function schemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

const errorEnvelope = {
  type: 'object',
  required: ['success', 'error'],
  properties: {
    success: { const: false },
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', enum: Object.keys(errorStatus) },
        message: { type: 'string' },
        details: { type: 'array', items: { type: 'object', properties: { path: { type: 'string' }, message: { type: 'string' } } } },
      },
    },
  },
};

const pagination = {
  type: 'object',
  properties: { page: { type: 'integer' }, limit: { type: 'integer' }, total: { type: 'integer' }, totalPages: { type: 'integer' } },
};

function queryParameters(query: z.ZodType | undefined): JsonSchema[] {
  if (!query) return [];
  const schema = schemaOf(query, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(schema.properties ?? {}).map(([name, s]) => ({ name, in: 'query', required: schema.required?.includes(name) ?? false, schema: s }));
}

/** The OpenAPI 3.1 document of every operation, from the zod schemas the routes validate with. */
export function openApiDocument(operations: Operation[], serverUrl: string): JsonSchema {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) {
    const pathParams = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' } }));
    const data = schemaOf(op.response, 'output');
    const success =
      op.path === '/docs'
        ? { description: 'HTML', content: { 'text/html': { schema: { type: 'string' } } } }
        : op.mediaTypes
        ? { description: 'Success', content: op.mediaTypes }
        : {
            description: 'Success',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['success', 'data'],
                  properties: { success: { const: true }, data, ...(op.paginated ? { pagination } : {}) },
                },
              },
              ...(op.csv ? { 'text/csv': { schema: { type: 'string', description: 'A header row, then one row per item (Content-Disposition: attachment)' } } } : {}),
            },
          };
    const errors = Object.fromEntries(
      Object.entries(errorStatus)
        .filter(([, status]) => status >= 400)
        .map(([, status]) => [String(status), { $ref: '#/components/responses/Error' }]),
    );
    (paths[op.path] ??= {})[op.method] = {
      summary: op.summary,
      operationId: `${op.method}${op.path.replace(/[{}]/g, '').replace(/[/.](\w)/g, (_, c: string) => c.toUpperCase())}`,
      ...(op.scope ? { security: [{ apiKey: [] }], ...(op.scope === 'any' ? {} : { 'x-required-scope': op.scope }) } : { security: [] }),
      parameters: [...pathParams, ...queryParameters(op.query)],
      ...(op.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: schemaOf(op.body, 'input'), ...(op.example !== undefined ? { example: op.example } : {}) } } } }
        : {}),
      responses: { [String(op.status)]: success, ...errors },
    };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'linkroute', version: '1.0.0', description: 'Link routing and tracking: links, rules, campaigns, conversions and analytics.' },
    servers: [{ url: serverUrl }],
    security: [{ apiKey: [] }],
    components: {
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer lr_live_...' } },
      responses: { Error: { description: 'The error envelope', content: { 'application/json': { schema: errorEnvelope } } } },
    },
    paths,
  };
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A self-contained reference page (no scripts, no external assets). */
export function docsPage(document: JsonSchema): string {
  const paths = document.paths as Record<string, Record<string, { summary: string; 'x-required-scope'?: string; requestBody?: unknown; parameters: unknown[] }>>;
  const sections = Object.entries(paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, op]) => {
      const body = op.requestBody ? `<details><summary>Request body</summary><pre>${escapeHtml(JSON.stringify(op.requestBody, null, 2))}</pre></details>` : '';
      const params = op.parameters.length ? `<details><summary>Parameters</summary><pre>${escapeHtml(JSON.stringify(op.parameters, null, 2))}</pre></details>` : '';
      return `<section><h2><code>${method.toUpperCase()} ${escapeHtml(path)}</code></h2><p>${escapeHtml(op.summary)}${op['x-required-scope'] ? ` &middot; scope <code>${escapeHtml(op['x-required-scope'])}</code>` : ''}</p>${params}${body}</section>`;
    }),
  );
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>linkroute API</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}h2{font-size:1rem;margin:1.5rem 0 .25rem}pre{background:#f5f5f5;padding:.75rem;overflow:auto;font-size:12px}</style>
</head><body><h1>linkroute API</h1><p>Every request carries <code>Authorization: Bearer &lt;key&gt;</code>. Responses are <code>{"success":true,"data":...}</code> or the error envelope. The machine-readable document is <a href="/openapi.json">/openapi.json</a>.</p>${sections.join('\n')}</body></html>`;
}
