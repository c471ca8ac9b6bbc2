import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';

/**
 * The one way our code talks to ClickHouse, real server or the embedded chDB
 * endpoint. Settings pinned so both behave alike: ISO timestamps accepted,
 * 64-bit integers as JSON numbers, synchronous inserts (so a dedup token and
 * "acknowledged means stored" hold on servers where async_insert defaults on).
 * The client's own logging is off: it writes multi-line plain text, and every
 * caller already reports a failure it sees in our JSON log lines.
 */
export function connectClickHouse(url: string, options: { requestTimeoutMs?: number } = {}): ClickHouseClient {
  return createClient({
    url,
    request_timeout: options.requestTimeoutMs ?? 30_000,
    log: { level: ClickHouseLogLevel.OFF },
    // Parameters too long for a URL (a link set of thousands of ids, a tag filter, say)
    // go in a multipart body, which ClickHouse and the embedded endpoint both read;
    // in the URL they would be refused (414/431) before reaching the engine.
    use_multipart_params_auto: true,
    clickhouse_settings: {
      date_time_input_format: 'best_effort',
      output_format_json_quote_64bit_integers: 0,
      async_insert: 0,
    },
  });
}

export type { ClickHouseClient };
