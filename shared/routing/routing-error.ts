import { CodedError } from '../coded-error.ts';

/**
 * A link the routing engine cannot compile or hydrate: a bug or a version skew between
 * the API that compiled it and the redirector serving it, never the client's input
 * (validated before it is compiled). Not an AppError, which is what API clients see:
 * the API answers it as any unexpected error (a 500, logged with its stack), the
 * redirector serves that link its error page.
 */
export type RoutingErrorCode =
  /** A compiled link in a format (its `v`) this code does not read. */
  | 'COMPILED_FORMAT_UNSUPPORTED'
  /** A link's time field (expiresAt) that is no timestamp. */
  | 'TIMESTAMP_INVALID'
  /** A rule of a type with no matcher, at compile time (hydration skips such rules instead). */
  | 'RULE_TYPE_UNKNOWN';

export class RoutingError extends CodedError<RoutingErrorCode> {}
