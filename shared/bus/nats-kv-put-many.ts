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
 *
 * A put may be conditional on its key's last sequence in the stream (as `kv.update`'s
 * previousSeq): JetStream stores it only if the key's last message still has that
 * sequence, so a put that reaches the server late (its sender timed out and gave up on
 * it) cannot land after a newer one made since. A refusal names the key's actual last
 * sequence, and the entry is put again expecting it (see putMany).
 */
import { createInbox, headers, type Msg, type MsgHdrs, type NatsConnection } from 'nats';

/** JetStream's answer to a publish: `{stream, seq}` or `{error: {code, err_code, description}}`. */
interface PubAck {
  seq?: number;
  error?: { code?: number; err_code?: number; description?: string };
}

/** The key alphabet of NATS KV (nats.js's validateKey): tokens of these, no empty token. */
const VALID_KEY = /^[-/_=a-zA-Z0-9]+(\.[-/_=a-zA-Z0-9]+)*$/;

/** JetStream's header for a conditional put: the subject's last sequence, 0 when it has no message. */
const EXPECTED_LAST_SUBJECT_SEQUENCE = 'Nats-Expected-Last-Subject-Sequence';
/** JetStream's error code for a put whose expected last sequence was not the subject's ("wrong last sequence: N"). */
const WRONG_LAST_SEQUENCE = 10071;
const WRONG_LAST_SEQUENCE_REPORTED = /wrong last sequence: (\d+)/;
/**
 * Puts of one entry, the first included, while refusals for a wrong last sequence come
 * back. One refusal is the usual (the caller's record of the sequence was behind: a
 * late write of another sender's landed, the bucket was recreated or the key purged);
 * a second means the key is being written by someone else meanwhile, which the caller
 * rules out, so the batch fails and the caller retries it whole.
 */
const WRONG_LAST_SEQUENCE_ATTEMPTS = 3;

export interface KvPutManyEntry {
  key: string;
  value: Uint8Array;
  /**
   * Store the value only if the key's last message (a value or a delete) has this
   * sequence (its KV revision); 0: only if the key has none. Absent: unconditional.
   */
  expectedRevision?: number;
}

export class KvPutError extends Error {
  readonly code = 'KV_PUT_FAILED';
  constructor(message: string) {
    super(message);
    this.name = 'KvPutError';
  }
}

const decoder = new TextDecoder();

/** What a reply says: stored at `seq`, refused as expecting a wrong last sequence (the key's actual one), or failed. */
type Reply = { seq: number } | { wrongLastSeq: number } | { failure: string };

function replyOf(msg: Msg): Reply {
  // No stream listens on the subject: the server answers 503 with no body.
  if (msg.data.length === 0) return { failure: `no acknowledgement (status ${msg.headers?.code ?? 'none'})` };
  const ack = JSON.parse(decoder.decode(msg.data)) as PubAck;
  if (ack.error) {
    const actual = ack.error.err_code === WRONG_LAST_SEQUENCE ? WRONG_LAST_SEQUENCE_REPORTED.exec(ack.error.description ?? '') : null;
    if (actual) return { wrongLastSeq: Number(actual[1]) };
    return { failure: `${ack.error.description ?? 'error'} (${ack.error.code ?? '?'})` };
  }
  return typeof ack.seq === 'number' ? { seq: ack.seq } : { failure: 'unexpected acknowledgement' };
}

function expecting(seq: number): MsgHdrs {
  const h = headers();
  h.set(EXPECTED_LAST_SUBJECT_SEQUENCE, String(seq));
  return h;
}

/**
 * Puts every entry into the bucket whose subjects start with `prefix` (`$KV.<bucket>.`).
 * Resolves once JetStream has stored all of them, with the sequence each was stored at
 * (in the entries' order); rejects with a KvPutError when any was refused or not
 * acknowledged within `timeoutMs` (the others may be stored: the caller retries them
 * all, as with a failed Promise.all of puts).
 *
 * An entry with `expectedRevision` that JetStream refuses for a wrong last sequence is put
 * again expecting the sequence the refusal names (up to WRONG_LAST_SEQUENCE_ATTEMPTS puts
 * in all): the caller must be the only one writing that key meanwhile (the snapshot
 * publisher holds the key's outbox row), so whatever the key holds is older than the
 * entry. What the expectation guards against is the other way round: this put arriving
 * late, after its caller gave up on it and a newer one was stored.
 */
export async function putMany(nc: NatsConnection, prefix: string, entries: ReadonlyArray<KvPutManyEntry>, timeoutMs: number): Promise<number[]> {
  if (entries.length === 0) return [];
  for (const { key } of entries) if (!VALID_KEY.test(key)) throw new KvPutError(`invalid key "${key}"`);
  const inbox = createInbox();
  const seqs = new Array<number>(entries.length).fill(0);
  // Puts made of each entry: a reply to `${inbox}.<i>` answers its latest (one at a time).
  const attempts = new Uint8Array(entries.length);
  let waiting = entries.length;
  let failure: string | null = null;
  let settled = false;
  let settle!: (err?: Error) => void;
  const done = new Promise<void>((resolve, reject) => {
    settle = (err) => {
      settled = true;
      if (err) reject(err);
      else resolve();
    };
  });
  const put = (i: number, expectedSeq: number | undefined) => {
    attempts[i]!++;
    const { key, value } = entries[i]!;
    nc.publish(prefix + key, value, expectedSeq === undefined ? { reply: `${inbox}.${i}` } : { reply: `${inbox}.${i}`, headers: expecting(expectedSeq) });
  };
  const sub = nc.subscribe(`${inbox}.*`, {
    callback: (err, msg) => {
      if (settled) return;
      if (err) {
        settle(err);
        return;
      }
      const i = Number(msg.subject.slice(inbox.length + 1));
      let reply: Reply;
      try {
        reply = replyOf(msg);
      } catch (parseErr) {
        reply = { failure: `unreadable acknowledgement: ${(parseErr as Error).message}` };
      }
      if ('seq' in reply) seqs[i] = reply.seq;
      else if ('wrongLastSeq' in reply) {
        if (failure === null && attempts[i]! < WRONG_LAST_SEQUENCE_ATTEMPTS) {
          put(i, reply.wrongLastSeq);
          return;
        }
        failure ??= `wrong last sequence for "${entries[i]!.key}" after ${attempts[i]} puts (the key's last is ${reply.wrongLastSeq}: written by another writer meanwhile?)`;
      } else failure ??= reply.failure;
      if (--waiting === 0) settle(failure === null ? undefined : new KvPutError(`KV put failed: ${failure}`));
    },
  });
  const timer = setTimeout(() => settle(new KvPutError(`${waiting} of ${entries.length} KV puts not acknowledged within ${timeoutMs} ms`)), timeoutMs);
  try {
    for (let i = 0; i < entries.length; i++) put(i, entries[i]!.expectedRevision);
    await done;
    return seqs;
  } finally {
    clearTimeout(timer);
    sub.unsubscribe();
  }
}
