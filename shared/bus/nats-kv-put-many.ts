/**
 * Many KV puts in flight at once, each acknowledged by JetStream, through one reply
 * subscription: the writes `kv.put` would make (a publish on `$KV.<bucket>.<key>`
 * whose reply is JetStream's PubAck), without nats.js's per-request machinery (a
 * subscription entry, a timer, a deferred and an Error object for each put).
 *
 * Hand-written because it pays: the snapshot publisher puts one entry per link, and
 * `Promise.all` of `kv.put` cost 38-96 µs of client CPU a put (with noAsyncTraces) where
 * this costs 14-64 µs, and 188 -> 49 µs of wall time a put (500 at a time, same-run
 * micro-benchmark on the busy 2-core machine, issue 18; scratch/kv-raw.ts on the branch
 * bulk-speed). nats.js has no batch put.
 */
import { createInbox, type Msg, type NatsConnection } from 'nats';

/** JetStream's answer to a publish: `{stream, seq}` or `{error: {code, description}}`. */
interface PubAck {
  seq?: number;
  error?: { code?: number; description?: string };
}

/** The key alphabet of NATS KV (nats.js's validateKey): tokens of these, no empty token. */
const VALID_KEY = /^[-/_=a-zA-Z0-9]+(\.[-/_=a-zA-Z0-9]+)*$/;

export class KvPutError extends Error {
  readonly code = 'KV_PUT_FAILED';
  constructor(message: string) {
    super(message);
    this.name = 'KvPutError';
  }
}

const decoder = new TextDecoder();

function failureOf(msg: Msg): string | null {
  // No stream listens on the subject: the server answers 503 with no body.
  if (msg.data.length === 0) return `no acknowledgement (status ${msg.headers?.code ?? 'none'})`;
  const ack = JSON.parse(decoder.decode(msg.data)) as PubAck;
  if (ack.error) return `${ack.error.description ?? 'error'} (${ack.error.code ?? '?'})`;
  return typeof ack.seq === 'number' ? null : 'unexpected acknowledgement';
}

/**
 * Puts every entry into the bucket whose subjects start with `prefix` (`$KV.<bucket>.`).
 * Resolves once JetStream has stored all of them; rejects with a KvPutError when any was
 * refused or not acknowledged within `timeoutMs` (the others may be stored: the caller
 * retries them all, as with a failed Promise.all of puts).
 */
export async function putMany(
  nc: NatsConnection,
  prefix: string,
  entries: ReadonlyArray<{ key: string; value: Uint8Array }>,
  timeoutMs: number,
): Promise<void> {
  if (entries.length === 0) return;
  for (const { key } of entries) if (!VALID_KEY.test(key)) throw new KvPutError(`invalid key "${key}"`);
  const inbox = createInbox();
  let waiting = entries.length;
  let failure: string | null = null;
  let settle!: (err?: Error) => void;
  const done = new Promise<void>((resolve, reject) => (settle = (err) => (err ? reject(err) : resolve())));
  const sub = nc.subscribe(`${inbox}.*`, {
    max: entries.length,
    callback: (err, msg) => {
      if (err) {
        settle(err);
        return;
      }
      try {
        failure ??= failureOf(msg);
      } catch (parseErr) {
        failure ??= `unreadable acknowledgement: ${(parseErr as Error).message}`;
      }
      if (--waiting === 0) settle(failure === null ? undefined : new KvPutError(`KV put failed: ${failure}`));
    },
  });
  const timer = setTimeout(() => settle(new KvPutError(`${waiting} of ${entries.length} KV puts not acknowledged within ${timeoutMs} ms`)), timeoutMs);
  try {
    entries.forEach(({ key, value }, i) => nc.publish(prefix + key, value, { reply: `${inbox}.${i}` }));
    await done;
  } finally {
    clearTimeout(timer);
    sub.unsubscribe();
  }
}
