/**
 * A tag as links store it: Unicode NFC, trimmed, inner whitespace runs as one space,
 * lowercase, so `Summer Sale` and ` summer  sale` are one tag. The one declaration of
 * that form: the API's schemas and the dashboard (its bundle takes this file; no zod
 * here) both spell tags with it.
 */
export function tagNormalForm(tag: string): string {
  return tag.normalize('NFC').trim().replace(/\s+/gu, ' ').toLowerCase();
}

/**
 * Text searched for within tags, spelled as tagNormalForm spells them so it matches
 * what is stored (`Summer  Sale` finds `summer sale`), but not trimmed: it is a part of
 * a tag, and a space at its edge is meant (` sale` is where a word starts).
 */
export function tagTextNormalForm(text: string): string {
  return text.normalize('NFC').replace(/\s+/gu, ' ').toLowerCase();
}
