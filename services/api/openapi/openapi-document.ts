import { z } from 'zod';
import { errorStatus, type ErrorCode, type ErrorDetail } from '../../../shared/errors.ts';
import { paginationSchema } from '../../../shared/schemas/common.ts';
import { errorEnvelopeSchema } from '../../../shared/schemas/error-envelope.ts';
import { IDEMPOTENCY_WINDOW_HOURS, KEY_PATTERN } from '../middleware/idempotency.ts';
import { componentExamples, errorExamples, pathParameterExample } from './examples.ts';
import { schemaConverter, type JsonSchema, type SchemaConverter } from './json-schemas.ts';
import type { Operation } from './operations.ts';
import { errorCodesOf, takesIdempotencyKey } from './statuses.ts';

const ref = (kind: 'schemas' | 'headers' | 'parameters', name: string) => ({ $ref: `#/components/${kind}/${name}` });

const headers = {
  'X-RateLimit-Limit': { description: "Requests per rolling hour of the workspace's plan", schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { description: 'Requests left in the window, across every API instance', schema: { type: 'integer' } },
  'X-RateLimit-Reset': { description: 'When the window frees requests again, in Unix seconds', schema: { type: 'integer' } },
  'Retry-After': { description: 'Seconds to wait before retrying', schema: { type: 'integer' } },
  'Idempotent-Replayed': { description: `\`true\` when this is the stored answer to an earlier request with the same Idempotency-Key`, schema: { type: 'string', enum: ['true'] } },
};

const idempotencyKey = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    `Makes a retry safe (a UUID per request is a good key): the first request with a key runs and its answer (status, body and X-Linkroute-Counters) is kept for ${IDEMPOTENCY_WINDOW_HOURS} h; the same key with the same request gets that answer again ` +
    '(Idempotent-Replayed: true) and nothing runs again. The same key with another request is 422 IDEMPOTENCY_KEY_REUSED; while the first still runs, 409 IDEMPOTENCY_KEY_IN_USE. Keys belong to the workspace.',
  // No example: a console would send the same key with every request it tries.
  schema: { type: 'string', pattern: KEY_PATTERN.source },
};

/** Operations grouped by what they are about (the reference's sections), from the path's first segment. */
const tagsBySegment: Record<string, string> = {
  health: 'Operations',
  ready: 'Operations',
  metrics: 'Operations',
  me: 'Account',
  links: 'Links',
  tags: 'Links',
  campaigns: 'Campaigns',
  rules: 'Rules',
  qr: 'QR codes',
  conversions: 'Conversions',
  analytics: 'Analytics',
  domains: 'Domains',
  webhooks: 'Webhooks',
  'openapi.json': 'Reference',
  docs: 'Reference',
};
const tagOf = (path: string) => tagsBySegment[path.split('/')[1] ?? ''] ?? 'Other';

const reasons: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  409: 'Conflict',
  410: 'Gone',
  413: 'Payload too large',
  422: 'Unprocessable',
  429: 'Too many requests',
  503: 'Service unavailable',
};

const rateLimitHeaders = { 'X-RateLimit-Limit': ref('headers', 'X-RateLimit-Limit'), 'X-RateLimit-Remaining': ref('headers', 'X-RateLimit-Remaining'), 'X-RateLimit-Reset': ref('headers', 'X-RateLimit-Reset') };

/** The example error of a code on an operation: a 403 names the scope the operation requires, as the API does. */
function exampleError(op: Operation, code: ErrorCode): { message: string; details?: ErrorDetail[] } {
  if (code === 'FORBIDDEN' && op.scope !== undefined && op.scope !== 'any') return { message: `This API key lacks the ${op.scope} scope` };
  return errorExamples[code];
}

function errorResponses(op: Operation): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorCodesOf(op)) byStatus.set(errorStatus[code], [...(byStatus.get(errorStatus[code]) ?? []), code]);
  const responses: Record<string, unknown> = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    const retryAfter = status === 429 || status === 503 || codes.includes('IDEMPOTENCY_KEY_IN_USE');
    // The example: the operation's own error where it has one of this status (a 409 of
    // POST /links is most often a taken short code, not an Idempotency-Key in flight).
    const shown = codes.find((code) => op.errors?.includes(code)) ?? codes[0]!;
    responses[String(status)] = {
      description: `${reasons[status] ?? 'Error'}: ${codes.join(', ')}`,
      'x-error-codes': codes,
      headers: {
        // Set once the key is known: every answer of an authenticated operation but a 401.
        ...(op.scope !== undefined && status !== 401 ? rateLimitHeaders : {}),
        ...(retryAfter ? { 'Retry-After': ref('headers', 'Retry-After') } : {}),
      },
      content: {
        'application/json': {
          schema: ref('schemas', 'Error'),
          example: { success: false, error: { code: shown, ...exampleError(op, shown) } },
        },
      },
    };
  }
  return responses;
}

/** The example of a schema: its component's, or an array of its element's component example. */
function exampleOf(schema: z.ZodType): unknown {
  const id = z.globalRegistry.get(schema)?.id;
  if (id !== undefined) return componentExamples[id];
  if (schema instanceof z.ZodArray) {
    const element = exampleOf(schema.element as z.ZodType);
    return element === undefined ? undefined : [element];
  }
  return undefined;
}

/** The `data` (or the non-JSON body) an operation's example answer shows. */
export function responseExampleOf(op: Operation): unknown {
  return op.responseExample ?? exampleOf(op.response);
}

function successResponse(op: Operation, converter: SchemaConverter, description: string, example: unknown = responseExampleOf(op)): Record<string, unknown> {
  const successHeaders = {
    ...(op.scope !== undefined ? rateLimitHeaders : {}),
    ...(takesIdempotencyKey(op) ? { 'Idempotent-Replayed': ref('headers', 'Idempotent-Replayed') } : {}),
  };
  if (op.mediaTypes) {
    const content = Object.fromEntries(
      Object.entries(op.mediaTypes).map(([type, media]) => [type, media.schema.format === 'binary' ? media : { ...media, example }]),
    );
    return { description, headers: successHeaders, content };
  }
  const data = converter.convert(op.response, 'output');
  const total = Array.isArray(example) ? example.length : 1;
  return {
    description,
    headers: successHeaders,
    content: {
      'application/json': {
        schema: {
          type: 'object',
          required: ['success', 'data', ...(op.paginated ? ['pagination'] : [])],
          properties: { success: { const: true }, data, ...(op.paginated ? { pagination: converter.convert(paginationSchema, 'output') } : {}) },
        },
        example: { success: true, data: example, ...(op.paginated ? { pagination: { page: 1, limit: 20, total, totalPages: 1 } } : {}) },
      },
      ...(op.csv ? { 'text/csv': { schema: { type: 'string', description: 'A header row, then one row per item (Content-Disposition: attachment)' } } } : {}),
    },
  };
}

function queryParameters(op: Operation, converter: SchemaConverter): JsonSchema[] {
  if (!op.query) return [];
  const schema = converter.convert(op.query, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
  return Object.entries(schema.properties ?? {}).map(([name, s]) => {
    const { description, ...rest } = s;
    return { name, in: 'query', required: schema.required?.includes(name) ?? false, ...(description ? { description } : {}), schema: rest };
  });
}

const successDescriptions = { 200: 'OK', 201: 'Created', 202: 'Accepted' } as const;

function operationObject(op: Operation, converter: SchemaConverter): JsonSchema {
  const pathParams = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: { type: 'string' }, example: pathParameterExample(op.path, m[1]!) }));
  return {
    tags: [tagOf(op.path)],
    summary: op.summary,
    operationId: `${op.method}${op.path.replace(/[{}]/g, '').replace(/[/.](\w)/g, (_, c: string) => c.toUpperCase())}`,
    ...(op.scope ? { security: [{ apiKey: [] }], ...(op.scope === 'any' ? {} : { 'x-required-scope': op.scope }) } : { security: [] }),
    parameters: [...pathParams, ...queryParameters(op, converter), ...(takesIdempotencyKey(op) ? [ref('parameters', 'IdempotencyKey')] : [])],
    ...(op.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: converter.convert(op.body, 'input'), ...(op.example !== undefined ? { example: op.example } : {}) } } } }
      : {}),
    responses: {
      [String(op.status)]: successResponse(op, converter, successDescriptions[op.status]),
      ...(op.alsoStatus ? { [String(op.alsoStatus.status)]: successResponse(op, converter, op.alsoStatus.description, op.alsoStatus.example ?? responseExampleOf(op)) } : {}),
      ...errorResponses(op),
    },
  };
}

function build(operations: Operation[], serverUrl: string) {
  const converter = schemaConverter();
  // Answers first: the received form of a schema claims its name (json-schemas.ts).
  for (const op of operations) if (!op.mediaTypes) converter.convert(op.response, 'output');
  converter.convert(errorEnvelopeSchema, 'output');
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) (paths[op.path] ??= {})[op.method] = operationObject(op, converter);
  const schemas = converter.components();
  for (const [name, example] of Object.entries(componentExamples)) if (schemas[name]) schemas[name] = { ...schemas[name], examples: [example] };
  const document = {
    openapi: '3.1.0',
    info: {
      title: 'linkroute',
      version: '1.0.0',
      description:
        'Link routing and tracking: links, rules, campaigns, conversions and analytics. Every request but /health, /ready and this reference (/openapi.json, /docs) carries `Authorization: Bearer <key>`; Prometheus metrics are served on the admin port (`ADMIN_PORT`), not here. ' +
        'Answers are `{"success":true,"data":...}` (lists add `pagination`) or `{"success":false,"error":{"code","message","details?"}}`.',
    },
    servers: [{ url: serverUrl }],
    tags: [...new Set(Object.values(tagsBySegment))].map((name) => ({ name })),
    security: [{ apiKey: [] }],
    components: {
      securitySchemes: { apiKey: { type: 'http', scheme: 'bearer', description: 'Authorization: Bearer lr_live_...' } },
      schemas,
      headers,
      parameters: { IdempotencyKey: idempotencyKey },
    },
    paths,
  };
  return { document, named: converter.named };
}

/**
 * The OpenAPI 3.1 document of every operation, from the zod schemas the routes
 * validate with: named schemas as components, each operation with the statuses it
 * answers (statuses.ts), its headers and examples.
 */
export function openApiDocument(operations: Operation[], serverUrl: string): JsonSchema {
  return build(operations, serverUrl).document;
}

/** The zod schema behind each component, for the test that parses every example. */
export function componentSchemas(operations: Operation[]): Map<string, { schema: z.ZodType; io: 'input' | 'output' }> {
  return build(operations, 'http://localhost').named;
}
