import { access } from 'node:fs/promises';

/** Whether `path` exists; errors other than its absence (EACCES, ELOOP) are thrown. */
export async function pathExists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}
