import type { ApiFailure } from '../api.ts';
import { explain } from './error-box.tsx';

/**
 * Beside a picker whose whole list did not load (all-pages.ts): what went wrong and
 * a retry. Without it the picker would look like a workspace with nothing to pick.
 * A refusal (403) is not shown: the key may not list these (an `analytics:read` key
 * and campaigns), so the picker rightly offers none of them.
 */
export function ListFailure({ what, error, onRetry }: { what: string; error: ApiFailure | undefined; onRetry: () => void }) {
  if (!error || error.status === 403) return null;
  return (
    <span class="list-failure field-error" role="status">
      {what} did not load: {explain(error)}{' '}
      <button type="button" class="linkish" onClick={onRetry}>
        Retry
      </button>
    </span>
  );
}
