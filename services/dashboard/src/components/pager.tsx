import type { Pagination } from '../api.ts';
import { fmtInt } from '../format.ts';
import { setQuery } from '../router.ts';

export function Pager({ pagination, label }: { pagination: Pagination | undefined; label: string }) {
  const page = pagination?.page ?? 1;
  const pages = pagination?.totalPages ?? 1;
  if (!pagination) return null;
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      <button type="button" disabled={page <= 1} onClick={() => setQuery({ page: String(page - 1) })}>
        Previous
      </button>
      <span>
        Page {fmtInt(page)} of {fmtInt(Math.max(1, pages))} · {fmtInt(pagination.total ?? 0)} {label}
      </span>
      <button type="button" disabled={page >= pages} onClick={() => setQuery({ page: String(page + 1) })}>
        Next
      </button>
    </nav>
  );
}
