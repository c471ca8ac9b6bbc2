/**
 * A tag as links store it: Unicode NFC, trimmed, inner whitespace runs as one space,
 * lowercase, so `Summer Sale` and ` summer  sale` are one tag. The one declaration of
 * that form: the API's schemas and the dashboard (its bundle takes this file; no zod
 * here) both spell tags with it.
 */
export function tagNormalForm(tag: string): string {
  return tag.normalize('NFC').trim().replace(/\s+/gu, ' ').toLowerCase();
}
