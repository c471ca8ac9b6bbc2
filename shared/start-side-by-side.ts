/**
 * Starts that run side by side: their values once every one has settled. Unlike
 * Promise.all, a failure (the first in `starts`' order) is thrown only after the
 * others have settled too, so a start that fails never leaves another cut off half
 * way (a migration) or running unseen: `undo` is given what did start (undefined
 * where a start failed) to stop it first.
 */
export async function startSideBySide<T extends readonly unknown[] | []>(
  starts: T,
  undo?: (started: { -readonly [K in keyof T]: Awaited<T[K]> | undefined }) => Promise<void>,
): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const outcomes = await Promise.allSettled(starts);
  const values = outcomes.map((o) => (o.status === 'fulfilled' ? o.value : undefined));
  for (const outcome of outcomes) {
    if (outcome.status !== 'rejected') continue;
    await undo?.(values as { -readonly [K in keyof T]: Awaited<T[K]> | undefined });
    throw outcome.reason;
  }
  return values as { -readonly [K in keyof T]: Awaited<T[K]> };
}
