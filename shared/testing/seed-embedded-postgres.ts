import { cp, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { inject } from 'vitest';

/**
 * Gives `dataDir` (a DATA_DIR no linkroute has run on) the run's migrated embedded
 * Postgres (embedded-postgres-template.ts), as if a first start had made it: `<dataDir>/postgres`. Only in a vitest worker.
 */
export async function seedEmbeddedPostgres(dataDir: string): Promise<void> {
  const target = join(dataDir, 'postgres');
  if (await exists(target)) throw new Error(`${target} exists: seed only a new DATA_DIR`);
  await cp(join(inject('embeddedPostgresTemplate'), 'postgres'), target, { recursive: true });
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** A DATA_DIR whose `postgres` is a migrated embedded Postgres, closed (tests/global-setup.ts). */
    embeddedPostgresTemplate: string;
  }
}
