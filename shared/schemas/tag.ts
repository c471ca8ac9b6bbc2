import { z } from 'zod';
import { paginationQuery, repeatableNote, repeatableQueryList } from './common.ts';
import { documented } from './documented-as.ts';
import { tagNormalForm, tagTextNormalForm } from './tag-normal-form.ts';

export const MAX_TAGS_PER_LINK = 20;
export const MAX_TAG_LENGTH = 50;

/**
 * A tag as stored (tagNormalForm: NFC, trimmed, whitespace runs as one space, lowercase).
 * Commas are refused: they separate tags in `?tag=a,b`.
 */
export const tagName = z
  .string()
  .overwrite(tagNormalForm)
  .min(1, 'must not be empty')
  .max(MAX_TAG_LENGTH, `must be at most ${MAX_TAG_LENGTH} characters`)
  .regex(/^[^,\p{Cc}]*$/u, 'must not contain commas or control characters');

/**
 * A link's tags: normalised, duplicates (after normalising) dropped, first spelling's
 * order kept; the limit counts the tags that remain (["A", "a"] is one tag).
 */
export const tagList = documented(
  z
    .array(tagName)
    .overwrite((tags) => [...new Set(tags)])
    .max(MAX_TAGS_PER_LINK, `at most ${MAX_TAGS_PER_LINK} tags per link`),
  // What a client may send: the limits hold after normalising (a JSON Schema cannot say
  // so), and whitespace, tabs included, is normalised rather than refused.
  z
    .array(z.string().describe(`1-${MAX_TAG_LENGTH} characters after normalising (NFC, trimmed, whitespace runs as one space, lowercase); no commas or control characters but whitespace`))
    .describe(`At most ${MAX_TAGS_PER_LINK} distinct tags after normalising (["A", "a"] is one).`),
);

/** `?tag=a,b` or `?tag=a&tag=b`: links with any of the tags (comma = OR, as in every filter). */
export const tagFilter = repeatableQueryList((value) => value.split(','), z.string().max(MAX_TAGS_PER_LINK * (MAX_TAG_LENGTH + 1)))
  .pipe(z.array(tagName).min(1).max(MAX_TAGS_PER_LINK))
  .describe(`Links with any of these tags: tag=a,b. ${repeatableNote('tag')} At most ${MAX_TAGS_PER_LINK} tags.`);

export const tagSchema = z.object({
  name: z.string(),
  /** Live links of the workspace carrying the tag. */
  linkCount: z.number().int(),
})
  .meta({ id: 'Tag' });
export type Tag = z.infer<typeof tagSchema>;

export const tagListQuerySchema = z.strictObject({
  ...paginationQuery,
  /** Tags containing this text, in the tags' spelling (tagTextNormalForm). */
  q: z.string().overwrite(tagTextNormalForm).min(1).max(MAX_TAG_LENGTH).optional(),
});
