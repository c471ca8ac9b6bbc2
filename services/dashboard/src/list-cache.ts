import { LOAD_TIMEOUT_MS } from './use-load.ts';

/**
 * The whole lists the pickers offer (every campaign, every tag), kept in this tab
 * per workspace for a short while. A load costs up to 10 requests of the workspace's
 * hourly quota (a Starter workspace has 100, shared with its own integrations), and a
 * picker mounts on every view that has one: moving between the overview, the links
 * and a link's form would otherwise load the same list each time.
 *
 * - One load at a time per list and workspace: a picker that mounts while it is out
 *   joins it, whichever picker started it and whether that one is still mounted.
 * - An answer older than LIST_TTL_MS is loaded again by the next picker that asks; a
 *   picker on screen keeps what it shows.
 * - A write of this tab that changes a list calls invalidateList: the next picker
 *   loads it afresh. Writes from elsewhere (another tab, the API) show within the TTL.
 * - A failed load is not kept: the next picker asks again.
 * - Every picker gets the same array: none may change it.
 */
export const LIST_TTL_MS = 60_000;

export type ListName = 'campaigns' | 'tags';

interface Kept {
  answer: Promise<unknown>;
  /** Date.now() when it answered; null while it is out. */
  answeredAt: number | null;
}

/** By list, then by workspace id. */
const kept = new Map<ListName, Map<string, Kept>>();

/** `name` of `workspaceId`, as kept or loaded now with `load`. */
export function cachedList<T>(name: ListName, workspaceId: string, load: (signal: AbortSignal) => Promise<T>): Promise<T> {
  let byWorkspace = kept.get(name);
  if (!byWorkspace) kept.set(name, (byWorkspace = new Map()));
  const entry = byWorkspace.get(workspaceId);
  if (entry && (entry.answeredAt === null || Date.now() - entry.answeredAt < LIST_TTL_MS)) return entry.answer as Promise<T>;

  // Its own signal, not a picker's: others may join it after the one that started it
  // unmounts. Given up after a load's timeout, so an answer that never comes is not
  // joined for good (each picker's useLoad shows its own timeout meanwhile).
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), LOAD_TIMEOUT_MS);
  const fresh: Kept = { answer: load(controller.signal), answeredAt: null };
  byWorkspace.set(workspaceId, fresh);
  const still = () => kept.get(name)?.get(workspaceId) === fresh;
  fresh.answer.then(
    () => {
      clearTimeout(timer);
      if (still()) fresh.answeredAt = Date.now();
    },
    () => {
      // The pickers waiting on it show the failure; it is only not kept.
      clearTimeout(timer);
      if (still()) kept.get(name)!.delete(workspaceId);
    },
  );
  return fresh.answer as Promise<T>;
}

/**
 * After this tab changed `name` (created, renamed or deleted a campaign; wrote or
 * deleted a link, which adds and takes away tags): every workspace's copy goes, also
 * one still loading (its answer may predate the write). Pickers already on screen keep
 * theirs until they reload.
 */
export function invalidateList(name: ListName): void {
  kept.delete(name);
}
