import SwaggerParser from '@apidevtools/swagger-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApi, type TestApi } from './testing/api-harness.ts';

/**
 * An outside validator on the document as the API serves it: @apidevtools/swagger-parser
 * checks it against the OpenAPI 3.1 schema and resolves every $ref. Ours could agree
 * with itself and still not be OpenAPI; this one has never seen our code.
 */
describe('the served /openapi.json under an outside validator', () => {
  let api: TestApi;
  beforeAll(async () => {
    api = await startTestApi('pglite');
  });
  afterAll(() => api?.close());

  it('is valid OpenAPI 3.1 (swagger-parser validate: 0 errors), every $ref resolving', async () => {
    const served = (await (await fetch(`${api.url}/openapi.json`)).json()) as Record<string, unknown>;
    // validate() dereferences in place: give it a copy, keep the served text to compare.
    const validated = (await SwaggerParser.validate(structuredClone(served) as never)) as { openapi: string; paths: Record<string, unknown> };
    expect(validated.openapi).toBe('3.1.0');
    expect(Object.keys(validated.paths)).toEqual(Object.keys(served.paths as object));
    // Dereferenced, no $ref is left unresolved.
    expect(JSON.stringify(await SwaggerParser.dereference(structuredClone(served) as never))).not.toContain('"$ref"');
  });

  it('catches a broken document (so a pass means something)', async () => {
    const served = (await (await fetch(`${api.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, { responses: unknown }>> };
    const broken = structuredClone(served);
    broken.paths['/links']!.get!.responses = { '200': { content: {} } }; // a response without its required description
    await expect(SwaggerParser.validate(broken as never)).rejects.toThrow();
    const dangling = structuredClone(served) as unknown as { components: { schemas: Record<string, unknown> } };
    delete dangling.components.schemas.Link;
    await expect(SwaggerParser.validate(dangling as never)).rejects.toThrow(/Link/);
  });
});
