import type { ClickHouseClient } from '@clickhouse/client';

/** Rows of a parameterised ClickHouse query, as JSON objects. */
export async function queryRows<T>(ch: ClickHouseClient, query: string, params: Record<string, unknown>): Promise<T[]> {
  return (await ch.query({ query, query_params: params, format: 'JSONEachRow' })).json<T>();
}
