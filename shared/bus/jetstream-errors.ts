import { ErrorCode, NatsError, type JetStreamManager } from 'nats';

/**
 * JetStream API errors linkroute handles by name: nats.js rejects with a NatsError
 * whose `api_error.err_code` is the server's stable code for the condition.
 */
export const jetStreamErrors = {
  consumerNameInUse: 10013,
  consumerNotFound: 10014,
  streamNameInUse: 10058,
  streamNotFound: 10059,
  /** A KV create/update/delete whose expected revision is not the key's (it exists, or changed). */
  wrongLastSequence: 10071,
  consumerAlreadyExists: 10148,
} as const;

export type JetStreamErrorCode = (typeof jetStreamErrors)[keyof typeof jetStreamErrors];

export function isJetStreamError(err: unknown, ...codes: JetStreamErrorCode[]): boolean {
  const code = err instanceof NatsError ? err.api_error?.err_code : undefined;
  return code !== undefined && (codes as number[]).includes(code);
}

const UNREACHABLE: ReadonlySet<string> = new Set([ErrorCode.Timeout, ErrorCode.NoResponders, ErrorCode.ConnectionClosed, ErrorCode.ConnectionDraining, ErrorCode.Disconnect]);

/**
 * NATS refused an operation or gave no answer (any NatsError: unreachable, a timeout,
 * a JetStream API error such as a full stream), as opposed to a programming error.
 */
export function isNatsFailure(err: unknown): boolean {
  return err instanceof NatsError;
}

/**
 * JetStream cannot answer for now: no answer at all (isUnreachable), or a 503 from the
 * JetStream API (no leader yet, the cluster not ready), as during a cluster's failover.
 */
export function isTemporarilyUnavailable(err: unknown): boolean {
  return isUnreachable(err) || (err instanceof NatsError && err.api_error?.code === 503);
}

/** The request got no answer from JetStream: a timeout, no responders, a closed or draining connection. */
export function isUnreachable(err: unknown): boolean {
  return err instanceof NatsError && UNREACHABLE.has(err.code);
}

/**
 * Removes a consumer a read made for itself. Already gone or NATS unreachable: the
 * server drops it after its inactivity threshold anyway, so the read's outcome stands.
 */
export async function deleteConsumer(consumer: { delete(): Promise<boolean> }): Promise<void> {
  try {
    await consumer.delete();
  } catch (err) {
    if (!isJetStreamError(err, jetStreamErrors.consumerNotFound) && !isUnreachable(err)) throw err;
  }
}

/**
 * Purges messages nothing refers to any more (a replaced blob's chunks). NATS
 * unreachable: they stay until the blob is next replaced, taking space, never read.
 */
export async function purgeOrphans(jsm: JetStreamManager, stream: string, subject: string): Promise<void> {
  try {
    await jsm.streams.purge(stream, { filter: subject });
  } catch (err) {
    if (!isUnreachable(err)) throw err;
  }
}
