import { z } from 'zod';
import { commonEnv, parseEnv } from '../../shared/config/env.ts';

const cliEnv = z.object({
  DATABASE_URL: commonEnv.DATABASE_URL,
  DATA_DIR: commonEnv.DATA_DIR,
});

export type CliConfig = z.output<typeof cliEnv>;

export function loadCliConfig(env: Record<string, string | undefined> = process.env): CliConfig {
  return parseEnv(cliEnv, env);
}
