import { useRef } from 'preact/hooks';
import { nowAt } from '../focus.ts';
import { useFocusAfterRemoval } from '../use-focus-after-removal.ts';
import { announce } from './status-region.tsx';
import { tagNormalForm } from '../../../../shared/schemas/tag-normal-form.ts';

/**
 * Adds tags not yet in `tags` from text that may hold several, comma-separated, spelled as
 * the API stores them, so the form shows the tags the link will carry and drops repeats
 * (the API still checks length and characters).
 */
export function withTags(tags: string[], text: string): string[] {
  const next = [...tags];
  for (const tag of text.split(',').map(tagNormalForm)) if (tag && !next.includes(tag)) next.push(tag);
  return next;
}

/**
 * A link's tags as removable chips, and a field that adds one on Enter or a comma
 * (several when pasted comma-separated). What is left typed in the field when the
 * form is submitted counts too: the parent reads it through `pending`.
 */
export function TagInput(props: {
  id: string;
  tags: string[];
  onChange(tags: string[]): void;
  pending: string;
  onPending(text: string): void;
  suggestions: string[];
  /** aria-invalid and the id of its error message, when the API refused the tags. */
  invalid?: { 'aria-invalid': 'true' | undefined; 'aria-describedby': string | undefined };
}) {
  const listId = `${props.id}-suggestions`;
  /** Adds what `text` holds; a chip appears without a page change, so it is said. */
  const addFrom = (text: string) => {
    const next = withTags(props.tags, text);
    const added = next.slice(props.tags.length);
    props.onChange(next);
    props.onPending('');
    if (added.length > 0) announce(`${added.length > 1 ? 'Tags' : 'Tag'} ${added.join(', ')} added`);
  };
  const add = () => {
    if (props.pending.trim() !== '') addFrom(props.pending);
  };
  // A removed chip takes its focused button with it (WCAG 2.4.3): focus goes to the
  // chip now in its place, else the one before, else the tag field. Only once the tag
  // is gone: an effect of a render from before the removal (Preact runs a component's
  // pending effects before rendering it again) would focus the button about to go.
  const chips = useRef<HTMLUListElement>(null);
  const expectRemoval = useFocusAfterRemoval<{ tag: string; index: number }>(
    (removed) => !props.tags.includes(removed.tag),
    (removed) => [nowAt(chips.current?.querySelectorAll('button') ?? [], removed.index), document.getElementById(props.id)],
  );
  return (
    <div class="field tag-input">
      <label for={props.id}>Tags</label>
      {props.tags.length > 0 && (
        <ul class="chips" aria-label="Tags of this link" data-tags ref={chips}>
          {props.tags.map((tag, i) => (
            <li key={tag} data-tag={tag}>
              <span>{tag}</span>
              <button
                type="button"
                aria-label={`Remove tag ${tag}`}
                onClick={() => {
                  expectRemoval({ tag, index: i });
                  props.onChange(props.tags.filter((t) => t !== tag));
                  announce(`Tag ${tag} removed`);
                }}
              >
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
          aria-invalid={props.invalid?.['aria-invalid']}
          aria-describedby={[props.invalid?.['aria-describedby'], `${props.id}-help`].filter(Boolean).join(' ')}
          onInput={(e) => {
            const value = e.currentTarget.value;
            // A typed or pasted comma ends a tag.
            if (value.includes(',')) addFrom(value);
            else props.onPending(value);
          }}
          onKeyDown={(e) => {
            if (e.key !== 'Enter') return;
            // Enter adds the tag instead of submitting the form.
            e.preventDefault();
            add();
          }}
        />
        {/* Back to the field for the next tag: the button turns disabled once the text clears, which would drop focus. */}
        <button
          type="button"
          onClick={() => {
            add();
            document.getElementById(props.id)?.focus();
          }}
          disabled={props.pending.trim() === ''}
        >
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
