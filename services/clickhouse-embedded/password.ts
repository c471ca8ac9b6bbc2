import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { readOrGenerateSecretFile } from '../../shared/config/secret.ts';

const PASSWORD_FILE = 'clickhouse-password';

/**
 * The embedded ClickHouse's password: the configured one, else the one in
 * `$DATA_DIR/clickhouse-password` (mode 0600), generated on first start, so the
 * operator (the same user) can read it and other local users cannot.
 */
export async function embeddedClickHousePassword(configured: string | undefined, dataDir: string): Promise<{ value: string; source: string }> {
  if (configured) return { value: configured, source: 'CLICKHOUSE_PASSWORD' };
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const file = join(dataDir, PASSWORD_FILE);
  return { value: await readOrGenerateSecretFile(file), source: file };
}
