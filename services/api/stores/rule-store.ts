import { AppError } from '../../../shared/errors.ts';
import { newId } from '../../../shared/ids.ts';
import { iso } from '../../../shared/db/rows.ts';
import { retryingConcurrencyFailures, type Sql } from '../../../shared/db/postgres.ts';
import { maxPercentageTotal, orderRules, percentageTotal } from '../../../shared/routing/index.ts';
import type { RuleRecord } from '../../../shared/routing/index.ts';
import type { RuleType } from '../../../shared/schemas/rule-conditions.ts';
import type { Rule, RuleCreate } from '../../../shared/schemas/rule.ts';

/** A rules row as postgres.js returns it: the API's Rule with Date timestamps. */
type RuleRow = Omit<Rule, 'createdAt' | 'updatedAt'> & { createdAt: Date; updatedAt: Date };

export type RuleChanges = Partial<Pick<Rule, 'name' | 'conditions' | 'destinationUrl' | 'priority' | 'enabled' | 'deepLinkEnabled' | 'deepLinkIos' | 'deepLinkAndroid' | 'deepLinkFallbackUrl'>>;

type BudgetRule = Pick<RuleRecord, 'id' | 'linkId' | 'type' | 'conditions' | 'enabled'>;

function present(row: RuleRow): Rule {
  // A row's type and conditions were validated together when written (parseConditions).
  return { ...row, createdAt: iso(row.createdAt), updatedAt: iso(row.updatedAt) } as Rule;
}

export function toRuleRecord(rule: Rule): RuleRecord {
  return { ...rule, conditions: rule.conditions };
}

const invalid = (path: string, message: string) => new AppError('VALIDATION_ERROR', 'Invalid rule', [{ path, message }]);

export function ruleStore(sql: Sql) {
  const columns = sql`id, link_id, campaign_id, name, type, conditions, destination_url, priority, enabled,
    deep_link_enabled, deep_link_ios, deep_link_android, deep_link_fallback_url, created_at, updated_at`;

  /**
   * Percentage rules take consecutive slices of one visitor bucket per link, so the
   * enabled percentage rules a link sees (its own plus its campaign-wide ones) may
   * total at most 100. A campaign-wide rule is checked against every live link of the
   * campaign: a deleted link routes no visitor, and is never undeleted (links are only
   * soft-deleted, no write clears deleted_at), so its rules take no share. A link being
   * deleted meanwhile still counts, which can only refuse more; so do the candidate's
   * own link's rules (a changed rule of a deleted link is still checked beside them).
   * Callers hold the campaign row lock, so concurrent changes (from any API instance)
   * are checked one after another.
   */
  async function assertPercentageBudget(tx: Sql, campaignId: string, candidate: BudgetRule): Promise<void> {
    if (candidate.type !== 'percentage' || !candidate.enabled) return;
    const others = await tx<BudgetRule[]>`
      SELECT r.id, r.link_id, r.type, r.conditions, r.enabled FROM rules r
      WHERE r.campaign_id = ${campaignId} AND r.type = 'percentage' AND r.enabled AND r.id <> ${candidate.id}
        AND (r.link_id IS NULL OR r.link_id = ${candidate.linkId} OR EXISTS (SELECT 1 FROM links l WHERE l.id = r.link_id AND l.deleted_at IS NULL))`;
    const campaignWide = others.filter((r) => r.linkId === null);
    const byLink = new Map<string, BudgetRule[]>();
    for (const rule of others) {
      if (rule.linkId === null) continue;
      const list = byLink.get(rule.linkId);
      if (list) list.push(rule);
      else byLink.set(rule.linkId, [rule]);
    }
    const linkSets = candidate.linkId !== null ? [byLink.get(candidate.linkId) ?? []] : [[], ...byLink.values()];
    for (const linkRules of linkSets) {
      const total = percentageTotal([...campaignWide, ...linkRules, candidate]);
      if (total > maxPercentageTotal) {
        const scope = candidate.linkId !== null ? 'this link' : linkRules.length ? `link ${linkRules[0]!.linkId}` : 'this campaign';
        throw invalid('conditions.percentage', `enabled percentage rules for ${scope} would total ${total}%, more than 100%`);
      }
    }
  }

  /** Locks the campaign row (serialising rule changes per campaign) after checking it is the workspace's. */
  async function lockCampaign(tx: Sql, workspaceId: string, campaignId: string): Promise<boolean> {
    const [row] = await tx`SELECT id FROM campaigns WHERE id = ${campaignId} AND workspace_id = ${workspaceId} FOR UPDATE`;
    return row !== undefined;
  }

  return {
    async create(workspaceId: string, input: RuleCreate): Promise<Rule> {
      return (await retryingConcurrencyFailures(() => sql.begin(async (tx) => {
        const t = tx as unknown as Sql;
        if (!(await lockCampaign(t, workspaceId, input.campaignId))) throw invalid('campaignId', 'campaign not found');
        if (input.linkId !== null) {
          // Shared-locked until this rule commits: a move of the link to another campaign
          // (moveLinkRules locks the link) waits, then takes this rule along; or it went
          // first, and the link is read in its new campaign.
          const [link] = await t<{ campaignId: string; deletedAt: Date | null }[]>`
            SELECT campaign_id, deleted_at FROM links WHERE id = ${input.linkId} AND workspace_id = ${workspaceId} FOR SHARE`;
          if (!link || link.deletedAt) throw invalid('linkId', 'link not found');
          if (link.campaignId !== input.campaignId) throw invalid('linkId', `link belongs to campaign ${link.campaignId}, not ${input.campaignId}`);
        }
        const id = newId('rule');
        await assertPercentageBudget(t, input.campaignId, { id, linkId: input.linkId, type: input.type, conditions: input.conditions, enabled: input.enabled });
        const [row] = await t<RuleRow[]>`
          INSERT INTO rules (id, workspace_id, campaign_id, link_id, name, type, conditions, destination_url, priority, enabled,
            deep_link_enabled, deep_link_ios, deep_link_android, deep_link_fallback_url)
          VALUES (${id}, ${workspaceId}, ${input.campaignId}, ${input.linkId}, ${input.name}, ${input.type},
            ${t.json(input.conditions as never)}, ${input.destinationUrl}, ${input.priority}, ${input.enabled},
            ${input.deepLinkEnabled}, ${input.deepLinkIos}, ${input.deepLinkAndroid}, ${input.deepLinkFallbackUrl})
          RETURNING ${columns}`;
        return present(row!);
      }))) as Rule;
    },

    async get(workspaceId: string, id: string): Promise<Rule | undefined> {
      const [row] = await sql<RuleRow[]>`SELECT ${columns} FROM rules WHERE id = ${id} AND workspace_id = ${workspaceId}`;
      return row && present(row);
    },

    /**
     * Applies validated changes; `validateConditions` checks new conditions against
     * the stored type (which the caller cannot know before the row is read).
     */
    async update(workspaceId: string, id: string, changes: RuleChanges, validateConditions: (type: RuleType, input: unknown) => Record<string, unknown>): Promise<Rule> {
      return (await retryingConcurrencyFailures(() => sql.begin(async (tx) => {
        const t = tx as unknown as Sql;
        const [seen] = await t<Array<{ campaignId: string }>>`SELECT campaign_id FROM rules WHERE id = ${id} AND workspace_id = ${workspaceId}`;
        if (!seen) throw new AppError('NOT_FOUND', 'Rule not found');
        await lockCampaign(t, workspaceId, seen.campaignId);
        // Read again under the campaign's lock: a change that committed while this waited
        // (another PATCH of this rule, its link's move) is what the budget check must see.
        const [current] = await t<RuleRow[]>`SELECT ${columns} FROM rules WHERE id = ${id} AND workspace_id = ${workspaceId} FOR UPDATE`;
        if (!current) throw new AppError('NOT_FOUND', 'Rule not found');
        // Moved meanwhile with its link: its new campaign too. Taken after the rule, this lock
        // can meet another change of the rule in a deadlock; Postgres rolls one back, and
        // retryingConcurrencyFailures runs it again (as every rule write here).
        if (current.campaignId !== seen.campaignId) await lockCampaign(t, workspaceId, current.campaignId);
        const next = { ...changes };
        if (changes.conditions !== undefined) next.conditions = validateConditions(current.type, changes.conditions);
        await assertPercentageBudget(t, current.campaignId, {
          id,
          linkId: current.linkId,
          type: current.type,
          conditions: next.conditions ?? current.conditions,
          enabled: next.enabled ?? current.enabled,
        });
        const { conditions, ...plain } = next;
        const set = { ...plain, ...(conditions !== undefined ? { conditions: t.json(conditions as never) } : {}) };
        const [row] = await t<RuleRow[]>`
          UPDATE rules SET ${t(set as Record<string, unknown>)}, updated_at = now()
          WHERE id = ${id} RETURNING ${columns}`;
        return present(row!);
      }))) as Rule;
    },

    /**
     * Under the campaign's lock, as create and update: a link created in (or moved into)
     * the campaign meanwhile waits on it, so it is published without the rule, or is among
     * the links the delete queues (a campaign-wide rule's links are listed by its trigger).
     */
    async delete(workspaceId: string, id: string): Promise<Rule | undefined> {
      return (await retryingConcurrencyFailures(() => sql.begin(async (tx) => {
        const t = tx as unknown as Sql;
        const [seen] = await t<Array<{ campaignId: string }>>`SELECT campaign_id FROM rules WHERE id = ${id} AND workspace_id = ${workspaceId}`;
        if (!seen) return undefined;
        await lockCampaign(t, workspaceId, seen.campaignId);
        const [row] = await t<RuleRow[]>`DELETE FROM rules WHERE id = ${id} AND workspace_id = ${workspaceId} RETURNING ${columns}`;
        return row && present(row);
      }))) as Rule | undefined;
    },

    async list(
      workspaceId: string,
      query: { page: number; limit: number; linkId?: string | undefined; campaignId?: string | undefined; type?: RuleType | undefined; enabled?: boolean | undefined },
    ): Promise<{ items: Rule[]; total: number }> {
      const where = sql`WHERE workspace_id = ${workspaceId}
        ${query.linkId !== undefined ? sql`AND link_id = ${query.linkId}` : sql``}
        ${query.campaignId !== undefined ? sql`AND campaign_id = ${query.campaignId}` : sql``}
        ${query.type !== undefined ? sql`AND type = ${query.type}` : sql``}
        ${query.enabled !== undefined ? sql`AND enabled = ${query.enabled}` : sql``}`;
      const [count] = await sql<{ total: number }[]>`SELECT count(*)::int AS total FROM rules ${where}`;
      const rows = await sql<RuleRow[]>`
        SELECT ${columns} FROM rules ${where} ORDER BY created_at DESC, id DESC
        LIMIT ${query.limit} OFFSET ${(query.page - 1) * query.limit}`;
      return { items: rows.map(present), total: count!.total };
    },

    /** The rules a link is routed by (its own and its campaign's campaign-wide ones), in evaluation order. */
    async forLink(link: { id: string; campaignId: string }): Promise<Rule[]> {
      const rows = await sql<RuleRow[]>`
        SELECT ${columns} FROM rules
        WHERE link_id = ${link.id} OR (campaign_id = ${link.campaignId} AND link_id IS NULL)`;
      return orderRules(rows.map(present));
    },

    /**
     * A link moving to another campaign takes its rules along (the invariant of
     * migration 0002), if their percentages still fit beside the new campaign's. The
     * caller decided the move from the link's row under its lock (live, and in another
     * campaign): the rules of a link deleted or moved meanwhile must not move.
     */
    async moveLinkRules(tx: Sql, workspaceId: string, linkId: string, campaignId: string): Promise<void> {
      await lockCampaign(tx, workspaceId, campaignId);
      // Waits for a rule being created on the link (create holds it shared) to commit, so
      // the move sees that rule and takes it along.
      await tx`SELECT 1 FROM links WHERE id = ${linkId} AND workspace_id = ${workspaceId} FOR UPDATE`;
      // Every rule of the link locked and read as it is now (after a PATCH of one that was
      // under way), with no filter in SQL: a row lock re-checks only rows the statement's
      // snapshot matched, so a rule being enabled would be missed by `AND enabled`.
      const linkRules = await tx<BudgetRule[]>`
        SELECT id, link_id, type, conditions, enabled FROM rules WHERE link_id = ${linkId} ORDER BY id FOR UPDATE`;
      const moving = linkRules.filter((r) => r.type === 'percentage' && r.enabled);
      const campaignWide = await tx<BudgetRule[]>`
        SELECT id, link_id, type, conditions, enabled FROM rules
        WHERE campaign_id = ${campaignId} AND link_id IS NULL AND type = 'percentage' AND enabled`;
      const total = percentageTotal([...moving, ...campaignWide]);
      if (total > maxPercentageTotal) {
        throw new AppError('VALIDATION_ERROR', 'Invalid link update', [
          { path: 'campaignId', message: `the link's percentage rules plus the campaign's would total ${total}%, more than 100%` },
        ]);
      }
      await tx`UPDATE rules SET campaign_id = ${campaignId}, updated_at = now() WHERE link_id = ${linkId}`;
    },
  };
}

export type RuleStore = ReturnType<typeof ruleStore>;
