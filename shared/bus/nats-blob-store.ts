import { createHash } from 'node:crypto';
import { headers, nuid, type JetStreamClient, type JetStreamManager, type NatsConnection, type ObjectInfo, type PubAck } from 'nats';
import { BlobReadError } from './blob-read-error.ts';
import type { BlobInfo, BlobStore } from './bus.ts';
import { deleteConsumer, purgeOrphans } from './jetstream-errors.ts';

/** Chunk size of new blobs (capped by the server's max payload): fewer, larger messages cost less per byte. */
const CHUNK_BYTES = 256 * 1024;
/** Chunks published and not yet acknowledged, and chunks pulled ahead of the reader: bounds memory both ways. */
const WINDOW = 8;
/**
 * A read waits this long for a window of chunks before it decides they were purged by
 * a replace (a window that does come returns at once, however short this is).
 */
const FETCH_EXPIRES_MS = 2_000;

/**
 * A NATS Object Store bucket (`js.views.os`) behind the BlobStore interface. Blobs are
 * written and read in the Object Store's own layout (chunks on `$O.<bucket>.C.<nuid>`,
 * a JSON description rolled up on `$O.<bucket>.M.<name>`), so `nats object` tools and
 * nats.js `os.get()` read them, but the data paths are ours: nats.js hashes with a
 * JavaScript SHA-256 (about 50 MB/s here, seconds per snapshot) where node:crypto is
 * native, and its reader pushes chunks with no backpressure where ours pulls a few
 * at a time.
 */
export async function natsBlobStore(nc: NatsConnection, js: JetStreamClient, jsm: JetStreamManager, bucket: string, replicas = 1): Promise<BlobStore> {
  const os = await js.views.os(bucket, { replicas });
  const stream = `OBJ_${bucket}`;
  const chunkSubject = (id: string) => `$O.${bucket}.C.${id}`;
  const metaSubject = (name: string) => `$O.${bucket}.M.${base64UrlPadded(Buffer.from(name))}`;
  const chunkBytes = Math.min(CHUNK_BYTES, nc.info?.max_payload ?? CHUNK_BYTES);

  async function rawInfo(name: string): Promise<ObjectInfo | null> {
    const info = await os.info(name);
    return info && !info.deleted ? info : null;
  }

  return {
    async info(name) {
      const info = await rawInfo(name);
      return info ? toBlobInfo(info) : null;
    },

    async put(name, data, describe) {
      const old = await rawInfo(name);
      const id = nuid.next();
      const hash = createHash('sha256');
      let size = 0;
      let chunks = 0;
      const inFlight: Promise<PubAck>[] = [];
      // A chunk's publish that fails while an earlier one is awaited: kept, and the put stops at the next chunk.
      const failures: unknown[] = [];
      try {
        for await (const piece of data) {
          for (let offset = 0; offset < piece.length; offset += chunkBytes) {
            const chunk = piece.subarray(offset, offset + chunkBytes);
            hash.update(chunk);
            size += chunk.length;
            chunks++;
            if (failures.length > 0) throw failures[0];
            const ack = js.publish(chunkSubject(id), chunk);
            ack.catch((err: unknown) => failures.push(err));
            inFlight.push(ack);
            if (inFlight.length >= WINDOW) await inFlight.shift();
          }
        }
        await Promise.all(inFlight);
        const metadata = typeof describe === 'function' ? describe() : describe;
        const mtime = new Date().toISOString();
        const description = { name, description: '', bucket, nuid: id, size, chunks, mtime, digest: `SHA-256=${base64UrlPadded(hash.digest())}`, deleted: false, options: { max_chunk_size: chunkBytes }, metadata };
        const h = headers();
        h.set('Nats-Rollup', 'sub'); // the new description replaces the old one: this is the switch
        await js.publish(metaSubject(name), new TextEncoder().encode(JSON.stringify(description)), { headers: h });
        // The old chunks are unreachable now. A reader still on them fails and falls back.
        if (old) await purgeOrphans(jsm, stream, chunkSubject(old.nuid));
        return { name, size, modifiedAt: Date.parse(mtime), metadata };
      } catch (err) {
        await Promise.allSettled(inFlight);
        await purgeOrphans(jsm, stream, chunkSubject(id));
        throw err;
      }
    },

    async get(name) {
      const info = await rawInfo(name);
      if (!info) return null;
      const expected = info.digest;
      if (!expected.startsWith('SHA-256=')) throw new BlobReadError('BLOB_DIGEST_UNKNOWN', `blob ${name}: unknown digest ${expected}`);
      async function* data(): AsyncGenerator<Uint8Array> {
        if (info!.chunks === 0) return;
        // An ordered consumer pulled a window at a time: the next window is requested
        // once the caller has taken this one. The filter is a string, not a list: servers
        // before 2.10 ignore filter_subjects (this machine runs 2.9).
        const consumer = await js.consumers.get(stream, { filterSubjects: chunkSubject(info!.nuid) });
        const hash = createHash('sha256');
        let received = 0;
        const missing = () => new BlobReadError('BLOB_CHUNKS_MISSING', `blob ${name}: ${info!.chunks - received} of ${info!.chunks} chunks missing (replaced during the read?)`);
        try {
          while (received < info!.chunks) {
            const messages = await consumer.fetch({ max_messages: Math.min(WINDOW, info!.chunks - received), expires: FETCH_EXPIRES_MS });
            const before = received;
            for await (const m of messages) {
              received++;
              hash.update(m.data);
              yield m.data;
              // Nothing left on the chunk subject, yet chunks missing: a replace purged them.
              if (m.info.pending === 0 && received < info!.chunks) throw missing();
            }
            if (received === before) throw missing();
          }
        } finally {
          await deleteConsumer(consumer);
        }
        const digest = `SHA-256=${base64UrlPadded(hash.digest())}`;
        if (digest !== expected) throw new BlobReadError('BLOB_DIGEST_MISMATCH', `blob ${name}: digest ${digest}, expected ${expected}`);
      }
      return { info: toBlobInfo(info), data: data() };
    },

    async delete(name) {
      await os.delete(name);
    },
  };
}

function toBlobInfo(info: ObjectInfo): BlobInfo {
  return { name: info.name, size: info.size, modifiedAt: Date.parse(info.mtime), metadata: { ...info.metadata } };
}

/** The Object Store's encoding of names and digests: base64url, padding kept. */
function base64UrlPadded(bytes: Buffer): string {
  return bytes.toString('base64').replace(/\+/g, '-').replace(/\//g, '_');
}
