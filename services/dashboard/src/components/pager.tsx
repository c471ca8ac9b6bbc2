import type { Pagination } from '../api.ts';
import { fmtInt } from '../format.ts';
import { useState } from 'preact/hooks';
import { setQuery } from '../router.ts';
import { FieldError, invalidProps, type Problem } from './field-errors.tsx';

/** From this many pages, Previous and Next alone are a long way to page 40: a page number can be typed. */
const JUMP_FROM = 5;

/**
 * Previous and next page: the address's `page` unless `onPage` keeps it (a list within
 * a view whose address says something else). At either end the button is aria-disabled, not disabled:
 * a disabled button drops the focus it has (to <body>, WCAG 2.4.3) when Next
 * reaches the last page; an aria-disabled one keeps it and says it does nothing.
 */
export function Pager({ pagination, label, onPage = (to) => setQuery({ page: String(to) }) }: { pagination: Pagination | undefined; label: string; onPage?: (page: number) => void }) {
  const page = pagination?.page ?? 1;
  const pages = pagination?.totalPages ?? 1;
  const [typed, setTyped] = useState('');
  const [problems, setProblems] = useState<Problem[]>([]);
  if (!pagination) return null;
  const step = (to: number, allowed: boolean) => ({
    'aria-disabled': allowed ? undefined : ('true' as const),
    onClick: () => allowed && onPage(to),
  });
  const jumpId = `${label.toLowerCase().replace(/[^a-z0-9]+/g, '-')}-page-jump`;
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      <button type="button" {...step(page - 1, page > 1)}>
        Previous
      </button>
      <span>
        Page {fmtInt(page)} of {fmtInt(Math.max(1, pages))} · {fmtInt(pagination.total ?? 0)} {label}
      </span>
      <button type="button" {...step(page + 1, page < pages)}>
        Next
      </button>
      {pages >= JUMP_FROM && (
        // noValidate: said beside the field, in words, as the other forms do, where the
        // browser's bubble would vanish; a number past either end opens that end.
        <form
          class="page-jump"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            const input = document.getElementById(jumpId) as HTMLInputElement | null;
            const to = Math.min(pages, Math.max(1, Math.round(Number(typed))));
            // '5-' or '1e' reads as '' (badInput), as an empty field does: said at the
            // field, focus kept there.
            if (input?.validity.badInput || typed.trim() === '' || !Number.isFinite(to)) {
              setProblems([{ id: jumpId, label: 'Go to page', message: `enter a page number from 1 to ${fmtInt(pages)}` }]);
              input?.focus();
              return;
            }
            setProblems([]);
            onPage(to);
            setTyped('');
          }}
        >
          <label for={jumpId}>Go to page</label>
          <input
            id={jumpId}
            type="number"
            inputMode="numeric"
            min={1}
            max={pages}
            value={typed}
            {...invalidProps(problems, jumpId)}
            onInput={(e) => {
              setTyped(e.currentTarget.value);
              setProblems([]);
            }}
          />
          <button type="submit">Go</button>
          <FieldError problems={problems} id={jumpId} />
        </form>
      )}
    </nav>
  );
}
