import { LOAD_TIMEOUT_MS, loadTimeout } from './use-load.ts';

/**
 * The whole lists the pickers offer (every campaign, every tag), and the workspace's
 * domains the links' statuses read (all-pages.ts workspaceDomains), kept in this tab
 * per signed-in key for a short while. A load costs up to 10 requests of the workspace's
 * hourly quota (a Starter workspace has 100, shared with its own integrations), and a
 * picker mounts on every view that has one: moving between the overview, the links
 * and a link's form would otherwise load the same list each time.
 *
 * - Kept per owner: the signed-in key's id (all-pages.ts), not its workspace: two keys
 *   of one workspace may see different lists (one without `links:read` sees none), and
 *   never the key itself, which stays in sessionStorage only.
 * - dropLists (on sign-out and on any change of key) forgets every list and aborts every
 *   load still out, so none goes on under the next key nor is kept for the last one.
 * - One load at a time per list and owner: a picker that mounts while it is out
 *   joins it, whichever picker started it and whether that one is still mounted.
 * - A load unanswered after LOAD_TIMEOUT_MS is given up and fails as a view's own load
 *   does (loadTimeout), also for a picker that joined it later and has waited less.
 * - An answer older than LIST_TTL_MS is loaded again by the next picker that asks; a
 *   picker on screen keeps what it shows.
 * - A write of this tab that changes a list calls invalidateList: the next picker
 *   loads it afresh. Writes from elsewhere (another tab, the API) show within the TTL.
 * - A failed load is not kept: the next picker asks again.
 * - Every picker gets the same array: none may change it.
 */
export const LIST_TTL_MS = 60_000;

export type ListName = 'campaigns' | 'tags' | 'domains';

interface Kept {
  answer: Promise<unknown>;
  /** Date.now() when it answered; null while it is out. */
  answeredAt: number | null;
}

/** By list, then by owner. */
const kept = new Map<ListName, Map<string, Kept>>();
/** Every load still out, kept or not (invalidateList lets one finish for the pickers waiting on it): dropLists aborts them all. */
const out = new Set<AbortController>();

/**
 * `name` as `owner` sees it, as kept or loaded now with `load`. `load` must send every
 * request as `owner` (the key it reads when called, not per request) and stop on its signal.
 */
export function cachedList<T>(name: ListName, owner: string, load: (signal: AbortSignal) => Promise<T>): Promise<T> {
  let byOwner = kept.get(name);
  if (!byOwner) kept.set(name, (byOwner = new Map()));
  const entry = byOwner.get(owner);
  if (entry && (entry.answeredAt === null || Date.now() - entry.answeredAt < LIST_TTL_MS)) return entry.answer as Promise<T>;

  // Its own signal, not a picker's: others may join it after the one that started it
  // unmounts. Given up after a load's timeout, so an answer that never comes is not
  // joined for good; every picker waiting then fails as its own timeout would fail it.
  const controller = new AbortController();
  out.add(controller);
  const answer = new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(loadTimeout());
      controller.abort();
    }, LOAD_TIMEOUT_MS);
    const settled = () => {
      clearTimeout(timer);
      out.delete(controller);
    };
    load(controller.signal).then(
      (value) => {
        settled();
        resolve(value);
      },
      (err: unknown) => {
        settled();
        reject(err);
      },
    );
  });
  const fresh: Kept = { answer, answeredAt: null };
  byOwner.set(owner, fresh);
  const still = () => kept.get(name)?.get(owner) === fresh;
  answer.then(
    () => {
      if (still()) fresh.answeredAt = Date.now();
    },
    () => {
      // The pickers waiting on it show the failure; it is only not kept.
      if (still()) kept.get(name)!.delete(owner);
    },
  );
  return answer;
}

/**
 * After this tab changed `name` (created, renamed or deleted a campaign; wrote or
 * deleted a link, which adds and takes away tags): every owner's copy goes, also
 * one still loading (its answer may predate the write; the pickers waiting on it
 * still get it). Pickers already on screen keep theirs until they reload.
 */
export function invalidateList(name: ListName): void {
  kept.delete(name);
}

/** Every list of every owner goes, and every load still out is aborted: the signed-in key changed or left. */
export function dropLists(): void {
  kept.clear();
  for (const controller of out) controller.abort();
  out.clear();
}
