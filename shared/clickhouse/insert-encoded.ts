import { Readable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { ClickHouseClient, ClickHouseSettings } from '@clickhouse/client';

/**
 * Inserts rows already serialised in `format` (RowBinary, JSONEachRow, ...).
 * @clickhouse/client's insert() serialises JS values itself and takes raw
 * bytes only for text formats, so pre-encoded rows go through exec(): the
 * statement in the URL, the bytes as the body, exactly what insert() sends.
 * Resolves once ClickHouse has answered that the insert succeeded.
 */
export async function insertEncoded(
  client: ClickHouseClient,
  params: { table: string; columns?: readonly string[]; format: string; body: Buffer; settings?: ClickHouseSettings; queryId?: string },
): Promise<void> {
  const columns = params.columns ? ` (${params.columns.join(', ')})` : '';
  const result = await client.exec({
    query: `INSERT INTO ${params.table}${columns} FORMAT ${params.format}`,
    // A fresh stream per attempt: the bytes themselves are only read, so a retry can send them again.
    values: Readable.from([params.body], { objectMode: false }),
    clickhouse_settings: params.settings,
    ...(params.queryId ? { query_id: params.queryId } : {}),
  });
  // The (empty) answer must be read for the socket to go back to the pool.
  result.stream.resume();
  await finished(result.stream);
}
