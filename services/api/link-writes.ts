import { AppError, isAppError } from '../../shared/errors.ts';
import type { LinkCreate, LinkUpdate } from '../../shared/schemas/link.ts';
import type { CampaignStore } from './stores/campaign-store.ts';
import type { DomainStore } from './stores/domain-store.ts';
import type { ItemResult, LinkChanges, LinkRow, LinkStore, NewLink } from './stores/link-store.ts';
import type { RuleStore } from './stores/rule-store.ts';
import type { ClicksLimitBases } from './clicks-limit-base.ts';
import { errorFields, type Logger } from '../../shared/logger.ts';
import { toAppError } from './middleware/error-handler.ts';
import { MAX_PASSWORDS, RequestPasswords } from './request-passwords.ts';

const invalid = (what: string, path: string, message: string) => new AppError('VALIDATION_ERROR', what, [{ path, message }]);

/** An item whose password the request has no scrypt work left for (RequestPasswords). */
const REFUSED = Symbol('password refused');
const tooManyPasswords = () =>
  invalid('Invalid link', 'password', `a request may set at most ${MAX_PASSWORDS} different passwords (each is a slow hash); send this item in another request`);

/**
 * Creating and changing links, one or a thousand at a time, with the same checks:
 * references resolved against the caller's workspace (another workspace's campaign
 * or domain reads as absent), passwords hashed. Every lookup is one query for the
 * whole batch; each item gets its own result or error, in order.
 */
export function linkWrites(deps: {
  links: LinkStore;
  campaigns: CampaignStore;
  domains: DomainStore;
  rules: RuleStore;
  /** Starts a new limit's count from the link's clicks so far; absent: it counts from now (no bus or ClickHouse). */
  limitBases?: ClicksLimitBases | undefined;
  logger: Logger;
}) {
  const { links, campaigns, domains, rules } = deps;

  async function knownCampaigns(workspaceId: string, ids: Array<string | undefined>): Promise<Set<string>> {
    return campaigns.existing(workspaceId, [...new Set(ids.filter((id): id is string => id !== undefined))]);
  }

  /**
   * A link's new password hash: null to clear it, or REFUSED past the request's share of
   * scrypt work (RequestPasswords). scrypt runs on libuv's thread pool: a batch's hashes overlap.
   */
  function hashOrClear(passwords: RequestPasswords, password: string | null | undefined): Promise<string | null> | typeof REFUSED {
    if (password === null || password === undefined) return Promise.resolve(null);
    return passwords.hash(password) ?? REFUSED;
  }

  /**
   * An update's password: the stored hash when it is already this password's (each hash
   * has its own salt, so a new one would read as a change to a PATCH that changes
   * nothing), else a new hash. The stored hash is as good a hash of it as a new one,
   * so writing it is right even if the password changed since it was read. Past the
   * request's share of checks the password is hashed anew (one hash for all its items):
   * a bulk PATCH setting one password on 1,000 links is 100 checks and one hash.
   */
  async function hashOrKeep(passwords: RequestPasswords, password: string | null, stored: string | null): Promise<string | null | typeof REFUSED> {
    const same = password !== null && stored !== null ? passwords.matches(password, stored) : null;
    if (same !== null && (await same)) return stored;
    return hashOrClear(passwords, password);
  }

  /** The items not written when writing failed after others were stored: each says so, with the failure's code (503 for an outage, 500 for a bug). */
  function notCreated(err: unknown, written: number): AppError {
    const cause = toAppError(err);
    if (cause.code === 'INTERNAL_ERROR') deps.logger.error('bulk create failed part-way; the items written stay created', { written, ...errorFields(err) });
    else deps.logger.warn('bulk create failed part-way; the items written stay created', { written, ...errorFields(err) });
    return new AppError(cause.code, `Not created: some of the request's items were written, then writing this one failed (${cause.message}); send the items that failed again`);
  }

  return {
    /**
     * `chunk`: links per INSERT, each committed on its own; `written` is called after each
     * one that stored a link, so a caller can start publishing them while the next is
     * written. A short code given twice fails its later items, across chunks too. A write
     * failing once links are stored (by earlier chunks, or by its own chunk's first
     * statement before a collided code's retry) fails the items not written and those
     * after them, each with the failure's code; the items stored stay created and are
     * answered so. Only with nothing stored is the failure thrown.
     */
    async create(
      workspaceId: string,
      inputs: readonly LinkCreate[],
      options: { chunk?: number; written?: () => void } = {},
    ): Promise<Array<ItemResult<LinkRow>>> {
      const defaultCampaign = inputs.some((i) => i.campaignId === undefined) ? await campaigns.defaultId(workspaceId) : '';
      const passwords = new RequestPasswords();
      const [known, knownDomains, hashes] = await Promise.all([
        knownCampaigns(workspaceId, inputs.map((i) => i.campaignId)),
        domains.findMany(workspaceId, [...new Set(inputs.flatMap((i) => (i.domainId ? [i.domainId] : [])))]),
        Promise.all(inputs.map((i) => hashOrClear(passwords, i.password))),
      ]);
      const results: Array<ItemResult<LinkRow> | undefined> = new Array(inputs.length);
      const valid: Array<{ index: number; link: NewLink }> = [];
      /** Custom codes of the batch, scoped to their domain. */
      const customCodes = new Set<string>();
      inputs.forEach((input, index) => {
        if (input.campaignId !== undefined && !known.has(input.campaignId)) {
          results[index] = invalid('Invalid link', 'campaignId', 'campaign not found');
          return;
        }
        const passwordHash = hashes[index]!;
        if (passwordHash === REFUSED) {
          results[index] = tooManyPasswords();
          return;
        }
        if (input.domainId) {
          const domain = knownDomains.get(input.domainId);
          if (!domain || domain.status !== 'verified') {
            results[index] = invalid('Invalid link', 'domainId', domain ? `domain ${domain.hostname} is not verified` : 'domain not found');
            return;
          }
        }
        // A code an earlier valid item takes (an invalid one takes none).
        if (input.shortCode !== undefined) {
          const scoped = `${input.domainId ?? ''}/${input.shortCode}`;
          if (customCodes.has(scoped)) {
            results[index] = new AppError('CONFLICT', `Short code "${input.shortCode}" is given to an earlier item of this request too`);
            return;
          }
          customCodes.add(scoped);
        }
        valid.push({ index, link: { input, campaignId: input.campaignId ?? defaultCampaign, passwordHash } });
      });
      const chunk = options.chunk ?? valid.length;
      let stored = 0;
      let failed: AppError | undefined;
      for (let start = 0; start < valid.length && !failed; start += chunk) {
        const part = valid.slice(start, start + chunk);
        const { results: created, failure } = await links.createMany(workspaceId, part.map((v) => v.link));
        const storedHere = created.filter((r) => r !== undefined && !isAppError(r)).length;
        stored += storedHere;
        if (failure !== undefined) {
          // Nothing of the request is stored: it fails whole, and a retry runs it again.
          if (stored === 0) throw failure;
          // Links are committed: a failed request (and its Idempotency-Key freed) would
          // have a retry create them again. The answer says which items were created.
          failed = notCreated(failure, stored);
        }
        part.forEach((v, i) => (results[v.index] = created[i] ?? failed!));
        if (storedHere > 0) options.written?.();
      }
      // A failure ends the loop: the chunks after its own were never tried.
      if (failed) for (const v of valid) results[v.index] ??= failed;
      return results as Array<ItemResult<LinkRow>>;
    },

    /**
     * `current` is the live link as read before; a link deleted meanwhile is NOT_FOUND.
     * Whether the link moves campaign (and its rules with it) is decided from the link as
     * the update locks it, not from `current`.
     */
    async update(workspaceId: string, items: ReadonlyArray<{ current: LinkRow; input: LinkUpdate }>): Promise<Array<ItemResult<LinkRow>>> {
      const passwords = new RequestPasswords();
      const [known, hashes] = await Promise.all([
        knownCampaigns(workspaceId, items.map((i) => i.input.campaignId)),
        Promise.all(items.map((i) => (i.input.password === undefined ? undefined : hashOrKeep(passwords, i.input.password, i.current.passwordHash)))),
      ]);
      const results: Array<ItemResult<LinkRow> | undefined> = new Array(items.length);
      const writes: Array<{ index: number; id: string; changes: LinkChanges }> = [];
      items.forEach(({ current, input }, index) => {
        if (input.campaignId !== undefined && !known.has(input.campaignId)) {
          results[index] = invalid('Invalid link', 'campaignId', 'campaign not found');
          return;
        }
        const hash = hashes[index];
        if (hash === REFUSED) {
          results[index] = tooManyPasswords();
          return;
        }
        const { password: _password, ...rest } = input;
        const changes: LinkChanges = { ...rest };
        if (hash !== undefined) changes.passwordHash = hash;
        writes.push({ index, id: current.id, changes });
      });
      const failed = await links.updateMany(workspaceId, writes, (tx, linkId, campaignId) => rules.moveLinkRules(tx, workspaceId, linkId, campaignId));
      const rows = await links.byIds(workspaceId, writes.map((w) => w.id));
      const limited: string[] = [];
      writes.forEach((w, i) => {
        const row = rows.get(w.id);
        results[w.index] = failed.get(i) ?? (row && !row.deletedAt ? row : new AppError('NOT_FOUND', 'Link not found'));
        if (!failed.has(i) && row && items[w.index]!.current.clicksLimit === null && row.clicksLimit !== null) limited.push(w.id);
      });
      // Before the answer, so the limit's count includes the link's earlier clicks by then.
      await deps.limitBases?.limitsSet(limited);
      return results as Array<ItemResult<LinkRow>>;
    },
  };
}

export type LinkWrites = ReturnType<typeof linkWrites>;
