import { z } from 'zod';
import { documentationOf } from '../../../shared/schemas/documented-as.ts';

export type JsonSchema = Record<string, unknown>;
export type Io = 'input' | 'output';

const COMPONENTS = '#/components/schemas/';
const DEFS = '#/$defs/';

/**
 * zod to JSON Schema for the OpenAPI document. A schema named with `.meta({ id })` in
 * shared/schemas becomes `components.schemas[id]`, referenced with `$ref` wherever it
 * appears. What a client sends (`input`: defaults optional, before transforms) and
 * what it receives (`output`) can differ for one zod schema: the received form keeps
 * the name and a different sent form is `<id>Input` (e.g. GeoConditions, whose
 * `operator` defaults: optional in a request, always present in an answer).
 * Schemas registered with `documented()` are shown as their documentation.
 *
 * Answers must be converted before requests, so the received form claims the name.
 */
export function schemaConverter() {
  const components: Record<string, JsonSchema> = {};
  /** Named zod schemas by component name (examples are checked against them). */
  const named = new Map<string, { schema: z.ZodType; io: Io }>();
  const inputNames = new Map<string, string>();

  function raw(schema: z.ZodType, io: Io): JsonSchema {
    const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, {
      io,
      unrepresentable: 'any',
      override: (ctx) => {
        const json = ctx.jsonSchema as JsonSchema;
        // zod bounds every int by the safe integers: noise for a reader.
        if (json.minimum === Number.MIN_SAFE_INTEGER) delete json.minimum;
        if (json.maximum === Number.MAX_SAFE_INTEGER) delete json.maximum;
        const documentation = documentationOf(ctx.zodSchema);
        if (!documentation) return;
        const replacement = convert(documentation, io);
        for (const key of Object.keys(ctx.jsonSchema)) delete (ctx.jsonSchema as JsonSchema)[key];
        Object.assign(ctx.jsonSchema, replacement);
      },
    }) as JsonSchema;
    return rest;
  }

  /**
   * The component name of schema `id` in `io`: `<id>Input` when the schema is also
   * answered and what is sent differs from what is received.
   */
  function nameOf(id: string, io: Io): string {
    if (io === 'output' || named.get(id)?.io !== 'output') return id;
    let name = inputNames.get(id);
    if (name === undefined) {
      const schema = named.get(id)!.schema;
      name = JSON.stringify(raw(schema, 'input')) === JSON.stringify(raw(schema, 'output')) ? id : `${id}Input`;
      inputNames.set(id, name);
    }
    return name;
  }

  function rewriteRefs(value: unknown, io: Io): unknown {
    if (Array.isArray(value)) return value.map((v) => rewriteRefs(v, io));
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(
      Object.entries(value).map(([key, v]) => [
        key,
        key === '$ref' && typeof v === 'string' && v.startsWith(DEFS) ? COMPONENTS + nameOf(v.slice(DEFS.length), io) : rewriteRefs(v, io),
      ]),
    );
  }

  /** The schema's JSON Schema, its named parts as `$ref`s to components (added as met). */
  function convert(schema: z.ZodType, io: Io): JsonSchema {
    const { $defs, ...root } = raw(schema, io);
    for (const [id, def] of Object.entries(($defs ?? {}) as Record<string, JsonSchema>)) {
      const name = nameOf(id, io);
      const json = rewriteRefs(def, io) as JsonSchema;
      const known = components[name];
      if (known && JSON.stringify(known) !== JSON.stringify(json)) throw new Error(`two different schemas are named ${name}`);
      components[name] = json;
      if (!named.has(name)) named.set(name, { schema: z.globalRegistry._idmap.get(id) as z.ZodType, io });
    }
    return rewriteRefs(root, io) as JsonSchema;
  }

  return {
    convert,
    /** Every component met so far, by name. */
    components: (): Record<string, JsonSchema> => Object.fromEntries(Object.entries(components).sort(([a], [b]) => a.localeCompare(b))),
    named,
  };
}

export type SchemaConverter = ReturnType<typeof schemaConverter>;
