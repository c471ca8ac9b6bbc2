/**
 * As the API stores a tag (trimmed, inner whitespace runs as one space, lowercase),
 * so the form shows the tags the link will carry and drops repeats. The API stays
 * the authority: it normalises and validates again (NFC, length, no commas).
 */
export const normaliseTag = (tag: string) => tag.trim().replace(/\s+/gu, ' ').toLowerCase();

/** Adds tags not yet in `tags` from text that may hold several, comma-separated. */
export function withTags(tags: string[], text: string): string[] {
  const next = [...tags];
  for (const tag of text.split(',').map(normaliseTag)) if (tag && !next.includes(tag)) next.push(tag);
  return next;
}

/**
 * A link's tags as removable chips, and a field that adds one on Enter or a comma
 * (several when pasted comma-separated). What is left typed in the field when the
 * form is submitted counts too: the parent reads it through `pending`.
 */
export function TagInput(props: { id: string; tags: string[]; onChange(tags: string[]): void; pending: string; onPending(text: string): void; suggestions: string[] }) {
  const listId = `${props.id}-suggestions`;
  const add = () => {
    if (props.pending.trim() === '') return;
    props.onChange(withTags(props.tags, props.pending));
    props.onPending('');
  };
  return (
    <div class="field tag-input">
      <label for={props.id}>Tags</label>
      {props.tags.length > 0 && (
        <ul class="chips" aria-label="Tags of this link" data-tags>
          {props.tags.map((tag) => (
            <li key={tag} data-tag={tag}>
              <span>{tag}</span>
              <button type="button" aria-label={`Remove tag ${tag}`} onClick={() => props.onChange(props.tags.filter((t) => t !== tag))}>
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
      <div class="tag-entry">
        <input
          id={props.id}
          list={listId}
          value={props.pending}
          aria-describedby={`${props.id}-help`}
          onInput={(e) => {
            const value = e.currentTarget.value;
            // A typed or pasted comma ends a tag.
            if (value.includes(',')) {
              props.onChange(withTags(props.tags, value));
              props.onPending('');
            } else props.onPending(value);
          }}
          onKeyDown={(e) => {
            if (e.key !== 'Enter') return;
            // Enter adds the tag instead of submitting the form.
            e.preventDefault();
            add();
          }}
        />
        <button type="button" onClick={add} disabled={props.pending.trim() === ''}>
          Add tag
        </button>
      </div>
      <datalist id={listId}>
        {props.suggestions
          .filter((s) => !props.tags.includes(s))
          .map((s) => (
            <option key={s} value={s} />
          ))}
      </datalist>
      <small id={`${props.id}-help`} class="help">
        Enter or a comma adds a tag; tags are kept in lowercase. Filter links by them in the list.
      </small>
    </div>
  );
}
