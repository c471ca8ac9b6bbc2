import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import { inject } from 'vitest';
import { pathExists } from '../path-exists.ts';

/**
 * Gives `dataDir` (a DATA_DIR no linkroute has run on) the run's migrated embedded
 * Postgres (embedded-postgres-template.ts), as if a first start had made it: `<dataDir>/postgres`. Only in a vitest worker.
 */
export async function seedEmbeddedPostgres(dataDir: string): Promise<void> {
  const target = join(dataDir, 'postgres');
  if (await pathExists(target)) throw new Error(`${target} exists: seed only a new DATA_DIR`);
  await cp(join(inject('embeddedPostgresTemplate'), 'postgres'), target, { recursive: true });
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** A DATA_DIR whose `postgres` is a migrated embedded Postgres, closed (tests/global-setup.ts). */
    embeddedPostgresTemplate: string;
  }
}
