import { useEffect, useRef } from 'preact/hooks';
import { ApiFailure } from '../api.ts';
import { focusFirst } from '../focus.ts';
import { explain } from './error-box.tsx';

/**
 * A refused form's problems, tied to the fields they are about (WCAG 3.3.1, 3.3.3,
 * 1.3.1): the API names each problem by its field's path (`destinationUrl`,
 * `conditions.countries.0`); the form knows that field's control and visible label.
 */

/** Fields by the API's path: the control's id (null: a group without one control) and its visible label. */
export type FieldMap = Record<string, { id: string | null; label: string }>;

export interface Problem {
  id: string | null;
  label: string;
  message: string;
}

/** The field a path names: itself, else its closest named parent (`tags.0` is the tags field). */
function fieldOf(path: string, fields: FieldMap) {
  const parts = path.split('.');
  for (let n = parts.length; n > 0; n--) {
    const field = fields[parts.slice(0, n).join('.')];
    if (field) return field;
  }
  return undefined;
}

export function problemsOf(error: ApiFailure | undefined, fields: FieldMap): Problem[] {
  return (error?.details ?? []).map((d) => {
    const field = fieldOf(d.path, fields);
    // A path the form does not show (a bug, or an API newer than the form) keeps the API's name: still better than nothing.
    return { id: field?.id ?? null, label: field?.label ?? d.path, message: d.message };
  });
}

/**
 * The number fields a form refuses itself, before sending anything, as a failure shown as
 * the API's are (at each field, in the summary): one the browser cannot read (`50-`, `1e`:
 * its value reads '' then, as an empty field's does, and would be sent as null or 0), or an
 * empty one where a number is needed. `numbers`: by the API's path, whether it may be empty.
 */
export function unreadNumbers(fields: FieldMap, numbers: Record<string, { optional?: boolean }>): ApiFailure | undefined {
  const details = Object.entries(numbers).flatMap(([path, { optional = false }]) => {
    const input = document.getElementById(fields[path]?.id ?? '');
    if (!(input instanceof HTMLInputElement)) return [];
    if (input.validity.badInput) return [{ path, message: 'must be a number' }];
    return !optional && input.value.trim() === '' ? [{ path, message: 'is required' }] : [];
  });
  return details.length > 0 ? new ApiFailure(400, 'VALIDATION_ERROR', 'Invalid input', details) : undefined;
}

export const errorIdOf = (id: string) => `${id}-error`;

/** aria-invalid and aria-describedby for a control: its problem's message first, then its help. */
export function invalidProps(problems: Problem[], id: string, help?: string) {
  const bad = problems.some((p) => p.id === id);
  const describedBy = [bad ? errorIdOf(id) : undefined, help].filter(Boolean).join(' ');
  return { 'aria-invalid': bad ? ('true' as const) : undefined, 'aria-describedby': describedBy || undefined };
}

/** The message beside a control, named by the field's visible label. */
export function FieldError({ problems, id }: { problems: Problem[]; id: string }) {
  const mine = problems.filter((p) => p.id === id);
  if (mine.length === 0) return null;
  return (
    <p id={errorIdOf(id)} class="field-error">
      {mine.map((p) => `${p.label}: ${p.message}`).join('; ')}
    </p>
  );
}

/**
 * The summary at the top of a refused form, in the fields' own words, each a link
 * to its field. Focus goes to the first invalid field, which reads its message;
 * without one (a 409, a 503) the summary itself takes focus and is an alert.
 */
export function ErrorSummary({ error, problems }: { error: ApiFailure | undefined; problems: Problem[] }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!error) return;
    // The first in the form's order (querySelectorAll keeps document order), not the API's.
    const ids = problems.flatMap((p) => (p.id ? [`#${CSS.escape(p.id)}`] : []));
    focusFirst(ids.length ? document.querySelector(ids.join(', ')) : null, ref.current);
  }, [error]);
  if (!error) return null;
  const onFields = problems.some((p) => p.id !== null);
  return (
    <div class="error-box" ref={ref} tabIndex={-1} role={onFields ? undefined : 'alert'} data-status={error.status} data-error-summary>
      <p>
        <strong>{problems.length > 0 ? 'Not saved: fix these fields.' : 'Not saved.'}</strong> {problems.length > 0 ? null : explain(error)}
      </p>
      {problems.length > 0 && (
        <ul>
          {problems.map((p, i) => (
            <li key={i}>{p.id ? <a href={`#${p.id}`}>{`${p.label}: ${p.message}`}</a> : `${p.label}: ${p.message}`}</li>
          ))}
        </ul>
      )}
    </div>
  );
}
