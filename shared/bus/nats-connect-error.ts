import { CodedError } from '../coded-error.ts';

/**
 * NATS could not be reached when a service started (refused, timed out, credentials or
 * TLS refused): the service cannot start. Names the servers (never the credentials) and
 * nats.js' own code, so the operator sees which setting to check. Infrastructure, not an
 * AppError. After a connection, outages are ridden out by reconnecting instead.
 */
export class NatsConnectError extends CodedError<'NATS_CONNECT_FAILED'> {}
