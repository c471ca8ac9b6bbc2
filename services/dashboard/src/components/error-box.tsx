import { ApiFailure } from '../api.ts';

function explain(error: ApiFailure): string {
  switch (error.status) {
    case 0:
      return error.message;
    case 403:
      return `This API key may not do that: ${error.message}.`;
    case 429:
      return `The workspace's rate limit is reached. ${error.retryAt ? `It resets at ${error.retryAt.toLocaleTimeString()}.` : ''}`;
    case 503:
      return `A store linkroute needs is unavailable right now (${error.message}). ${error.retryAt ? `Try again after ${error.retryAt.toLocaleTimeString()}.` : 'Try again shortly.'}`;
    default:
      return error.message;
  }
}

/** A failed load: what went wrong in words, and a way to try again. Never a blank view. */
export function ErrorBox({ error, onRetry }: { error: ApiFailure; onRetry?: () => void }) {
  return (
    <div class="error-box" role="alert">
      <p>
        <strong>{error.status === 0 ? 'No connection.' : error.status >= 500 ? 'The service could not answer.' : 'Request refused.'}</strong> {explain(error)}
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
