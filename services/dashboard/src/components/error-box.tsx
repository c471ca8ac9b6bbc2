import type { ComponentChildren } from 'preact';
import { ApiFailure } from '../api.ts';

/** A moment in the reader's clock, machine-readable in `datetime`; the date too when it is not today. */
function At({ date }: { date: Date }) {
  const today = date.toDateString() === new Date().toDateString();
  return <time dateTime={date.toISOString()}>{today ? date.toLocaleTimeString() : date.toLocaleString()}</time>;
}

/** What went wrong in words a user can act on. */
export function explain(error: ApiFailure): ComponentChildren {
  switch (error.status) {
    case 0:
      return error.message;
    case 403:
      return `This API key may not do that: ${error.message}.`;
    case 429:
      return error.retryAt ? (
        <>
          The workspace's rate limit is reached ({error.message}). It resets at <At date={error.retryAt} />.
        </>
      ) : (
        `The workspace's rate limit is reached (${error.message}).`
      );
    case 503:
      return error.retryAt ? (
        <>
          A store linkroute needs is unavailable right now ({error.message}). Try again after <At date={error.retryAt} />.
        </>
      ) : (
        `A store linkroute needs is unavailable right now (${error.message}). Try again shortly.`
      );
    default:
      return error.message;
  }
}

/** A failed load: what went wrong in words, and a way to try again. Never a blank view. */
export function ErrorBox({ error, onRetry }: { error: ApiFailure; onRetry?: () => void }) {
  return (
    <div class="error-box" role="alert" data-status={error.status}>
      <p>
        <strong>{error.code === 'NETWORK_ERROR' ? 'No connection.' : error.status === 0 ? 'Something went wrong.' : error.status >= 500 ? 'The service could not answer.' : 'Request refused.'}</strong> {explain(error)}
      </p>
      {error.details.length > 0 && (
        <ul>
          {error.details.map((d) => (
            <li key={d.path}>
              <code>{d.path}</code>: {d.message}
            </li>
          ))}
        </ul>
      )}
      {onRetry && (
        <button type="button" onClick={onRetry}>
          Retry
        </button>
      )}
    </div>
  );
}

/** Inline form errors: field-level details from a 400. */
export function FormError({ error }: { error: ApiFailure | undefined }) {
  if (!error) return null;
  return <ErrorBox error={error} />;
}
