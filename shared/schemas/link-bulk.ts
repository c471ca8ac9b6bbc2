import { z } from 'zod';
import { deletedSchema } from './common.ts';
import { apiErrorSchema } from './error-envelope.ts';
import { linkCreateSchema, linkSchema, linkUpdateSchema } from './link.ts';

/** Items per bulk request (create, update or delete). */
export const MAX_BULK_LINKS = 1_000;

/** A link id (or short code) as a bulk item names it. */
export const bulkLinkId = z.string().min(1).max(100).describe("A link's id, or its short code on the default domain (as /links/{id} takes one)");
/** A bulk list's length, said as the API says it. */
const bulkLength = <T extends z.ZodType>(item: T) => z.array(item).min(1, 'send at least one item').max(MAX_BULK_LINKS, `at most ${MAX_BULK_LINKS.toLocaleString('en-US')} items per request`);
const idList = bulkLength(bulkLinkId);
/** The envelope's lists: their items are checked one by one. */
const items = bulkLength(z.unknown());

/**
 * Bulk bodies are checked in two steps: the envelope here (a bad envelope is a 400
 * for the whole request), then each item on its own with the single-link schema, so
 * one bad item fails alone. These `*Envelope` schemas validate; the `*Body` ones
 * describe the full shape for the API reference.
 */
export const linkBulkCreateEnvelope = z.strictObject({ links: items });
export const linkBulkCreateBody = z.strictObject({ links: bulkLength(linkCreateSchema) }).meta({ id: 'LinkBulkCreate' });

/** One patch for many links (`ids` + `patch`), or a patch per link (`links: [{id, patch}]`). */
export const linkBulkUpdateEnvelope = z
  .strictObject({
    ids: items.optional(),
    patch: z.unknown().optional(),
    links: items.optional(),
  })
  .refine((b) => (b.links === undefined) !== (b.ids === undefined && b.patch === undefined), 'send either ids and patch, or links')
  .refine((b) => b.links !== undefined || (b.ids !== undefined && b.patch !== undefined), 'ids and patch go together');
export const linkBulkUpdateBody = z
  .union([
    z.strictObject({ ids: idList, patch: linkUpdateSchema }),
    z.strictObject({ links: bulkLength(z.strictObject({ id: bulkLinkId, patch: linkUpdateSchema })) }),
  ])
  .meta({ id: 'LinkBulkUpdate' });

/** One item of a per-link bulk update, checked on its own (its patch then with the single-link schema). */
export const linkBulkUpdateItem = z.strictObject({ id: bulkLinkId, patch: z.unknown().refine((patch) => patch !== undefined, 'required: the changes for this link') });

export const linkBulkDeleteEnvelope = z.strictObject({ ids: items });
export const linkBulkDeleteBody = z.strictObject({ ids: idList }).meta({ id: 'LinkBulkDelete' });

/** Per item, in request order: its result, or the error it alone got. */
export function bulkResultSchema<T extends z.ZodType>(data: T) {
  return z.array(
    z.union([
      z.object({ index: z.number().int(), success: z.literal(true), data }),
      z.object({ index: z.number().int(), success: z.literal(false), error: apiErrorSchema }),
    ]),
  );
}

export const linkBulkResultSchema = bulkResultSchema(linkSchema).meta({ id: 'LinkBulkResult' });
export const linkBulkDeleteResultSchema = bulkResultSchema(deletedSchema).meta({ id: 'LinkBulkDeleteResult' });
