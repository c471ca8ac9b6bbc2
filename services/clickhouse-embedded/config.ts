import { z } from 'zod';
import { commonEnv, parseEnv, port } from '../../shared/config/env.ts';

/**
 * `npm run clickhouse:embedded`: the embedded ClickHouse endpoint on its own,
 * for multi-process setups without a ClickHouse server. Only the variables it
 * uses, so an unrelated malformed one cannot stop it.
 */
export const clickhouseEmbeddedEnv = z.object({
  DATA_DIR: commonEnv.DATA_DIR,
  HOST: commonEnv.HOST,
  LOG_LEVEL: commonEnv.LOG_LEVEL,
  /** ClickHouse's own HTTP port, so `http://127.0.0.1:8123` works unchanged. */
  CLICKHOUSE_PORT: port(8123),
  /** The password of user `default`; unset: generated into $DATA_DIR/clickhouse-password. */
  CLICKHOUSE_PASSWORD: z.string().min(1).optional(),
});

export type ClickHouseEmbeddedConfig = z.output<typeof clickhouseEmbeddedEnv>;

export function loadClickHouseEmbeddedConfig(env: Record<string, string | undefined> = process.env): ClickHouseEmbeddedConfig {
  return parseEnv(clickhouseEmbeddedEnv, env);
}
