/**
 * The API's client-facing error: every failure an API client can see is an AppError
 * with a stable code; the HTTP status is derived from the code, never chosen ad hoc.
 * Infrastructure has typed errors of its own, with stable codes too (ConfigError,
 * RoutingError, SnapshotBlobError, BlobReadError, ChdbThreadError, JetStream's coded
 * errors); the API answers those it does not map (a store unreachable: 503) as 500.
 */
export const errorStatus = {
  VALIDATION_ERROR: 400,
  /** Bytes that are not an HTTP request the server can parse (answered before any route runs). */
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  /** The request's headers did not arrive within the server's headers timeout. */
  REQUEST_TIMEOUT: 408,
  CONFLICT: 409,
  /** A request with the same Idempotency-Key is still running. */
  IDEMPOTENCY_KEY_IN_USE: 409,
  /** POST /webhooks/{id}/test on a disabled endpoint: nothing is delivered to one, so nothing is queued. */
  WEBHOOK_DISABLED: 409,
  ALREADY_DELETED: 410,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  /** An Idempotency-Key sent again with a different request. */
  /** An `Expect` header other than 100-continue. */
  EXPECTATION_FAILED: 417,
  IDEMPOTENCY_KEY_REUSED: 422,
  RATE_LIMITED: 429,
  /** The request's headers exceed what the server parses (16 KiB in all). */
  REQUEST_HEADER_FIELDS_TOO_LARGE: 431,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof errorStatus;

export interface ErrorDetail {
  path: string;
  message: string;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetail[] | undefined;

  constructor(code: ErrorCode, message: string, details?: ErrorDetail[]) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
  }

  get status(): number {
    return errorStatus[this.code];
  }

  toJSON(): { code: ErrorCode; message: string; details?: ErrorDetail[] } {
    return this.details ? { code: this.code, message: this.message, details: this.details } : { code: this.code, message: this.message };
  }
}

export const isAppError = (err: unknown): err is AppError => err instanceof AppError;
