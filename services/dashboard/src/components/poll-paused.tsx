import type { RateLimitState } from '../api.ts';
import { fmtInt } from '../format.ts';

/** Why a live view stopped refreshing itself (usePoll), and a way to refresh by hand. */
export function PollPaused({ rate, onRefresh }: { rate: RateLimitState; onRefresh(): void }) {
  return (
    <div class="poll-paused" role="status" data-poll-paused>
      <p>
        Live updates paused to save your API quota: {fmtInt(rate.remaining)} of {fmtInt(rate.limit)} requests left this hour.
      </p>
      <button type="button" onClick={onRefresh}>
        Refresh now
      </button>
    </div>
  );
}
