import type { Readable } from 'node:stream';
import type { ClickHouseClient, ClickHouseSettings } from '@clickhouse/client';
import { untilClientCloses } from './client-closed.ts';

/**
 * Settings of every analytics read (never of a write: readonly refuses INSERTs).
 *
 * A ClickHouse server goes on with a statement whose HTTP client closed the connection
 * until it has rows to write, unless cancel_http_readonly_queries_on_client_close is
 * set, and that setting acts only on a query run with readonly > 0 (HTTPHandler.cpp:
 * `readonly > 0 && cancel_http_readonly_queries_on_client_close`). A GET is readonly by
 * itself; @clickhouse/client POSTs, so readonly is set here: 2, reads only but settings
 * may still change (1 also refuses SETTINGS clauses and table functions).
 *
 * The embedded stand-in needs neither: it cancels whatever statement's client goes
 * away (engine-queue.ts), and applies no readonly (request-settings.ts).
 */
export const analyticsReadSettings: ClickHouseSettings = {
  readonly: '2',
  cancel_http_readonly_queries_on_client_close: 1,
};

/**
 * Rows of a parameterised ClickHouse read, as JSON objects; with `signal`, abandoned
 * when the request's client goes away (ClientClosedRequest, untilClientCloses).
 */
export async function queryRows<T>(ch: ClickHouseClient, query: string, params: Record<string, unknown>, signal?: AbortSignal): Promise<T[]> {
  return untilClientCloses(signal, async (abort) => {
    const result = await ch.query({ query, query_params: params, format: 'JSONEachRow', clickhouse_settings: analyticsReadSettings, ...abort });
    // The client stops listening to abort_signal once the answer's headers are in (a
    // server sends them with its first rows): an abort while the rows are read closes
    // their stream here, or the rest would be read for no one.
    const close = () => result.close();
    if (signal?.aborted) close();
    signal?.addEventListener('abort', close, { once: true });
    try {
      return await result.json<T>();
    } finally {
      signal?.removeEventListener('abort', close);
    }
  });
}

/**
 * A read's answer as ClickHouse formats it (`FORMAT ...` in `query`), streamed; with
 * `signal`, abandoned when the request's client goes away. Once streaming, the response
 * pipeline destroys the stream when the client leaves.
 */
export async function queryStream(ch: ClickHouseClient, query: string, params: Record<string, unknown>, signal?: AbortSignal): Promise<Readable> {
  const result = await untilClientCloses(signal, (abort) => ch.exec({ query, query_params: params, clickhouse_settings: analyticsReadSettings, ...abort }));
  return result.stream;
}

/** Rows read a chunk at a time, and how to let them go: `close` ends the read whether or not it ever started (idempotent). */
export interface RowChunks<T> {
  chunks: AsyncIterable<T[]>;
  close(): void;
}

/**
 * Rows of a parameterised ClickHouse read, as JSON objects, a chunk at a time as they
 * arrive, for answers too large to hold (an export). Resolves once ClickHouse has
 * answered (an error it answers, or its being unreachable, rejects here, before any
 * row); with `signal`, abandoned when the request's client goes away. The answer is
 * open from then on: the caller must end it with `close` if it may not read it to the
 * end (a HEAD request reads nothing; ending the iteration early closes it too).
 */
export async function queryRowChunks<T>(ch: ClickHouseClient, query: string, params: Record<string, unknown>, signal?: AbortSignal): Promise<RowChunks<T>> {
  const result = await untilClientCloses(signal, (abort) => ch.query({ query, query_params: params, format: 'JSONEachRow', clickhouse_settings: analyticsReadSettings, ...abort }));
  const close = () => {
    signal?.removeEventListener('abort', close);
    result.close();
  };
  if (signal?.aborted) close();
  else signal?.addEventListener('abort', close, { once: true });
  return {
    chunks: (async function* chunks() {
      try {
        for await (const rows of result.stream<T>()) yield rows.map((row) => row.json());
      } finally {
        close();
      }
    })(),
    close,
  };
}
