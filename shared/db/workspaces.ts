import { AppError } from '../errors.ts';
import { generateApiKey, hashApiKey } from '../auth/api-key.ts';
import { newId } from '../ids.ts';
import { scopes as allScopes, type Plan, type Scope } from '../schemas/common.ts';
import { iso } from './rows.ts';
import type { Sql } from './postgres.ts';

/**
 * Workspaces and their API keys: shared by the API (authentication) and the
 * command-line tool (issuing and revoking keys).
 */
export interface Workspace {
  id: string;
  name: string;
  plan: Plan;
  createdAt: string;
}

export interface IssuedApiKey {
  id: string;
  workspaceId: string;
  key: string;
  prefix: string;
  scopes: Scope[];
}

export interface ApiKeyInfo {
  id: string;
  workspaceId: string;
  name: string;
  prefix: string;
  scopes: Scope[];
  createdAt: string;
  revokedAt: string | null;
}

export interface Principal {
  keyId: string;
  workspaceId: string;
  plan: Plan;
  scopes: ReadonlySet<Scope>;
}

/** A new workspace comes with its default campaign, which links join when none is named. */
export async function createWorkspace(sql: Sql, input: { name: string; plan: Plan }): Promise<Workspace> {
  const id = newId('workspace');
  return sql.begin(async (tx) => {
    const [row] = await tx<{ id: string; name: string; plan: Plan; createdAt: Date }[]>`
      INSERT INTO workspaces (id, name, plan) VALUES (${id}, ${input.name}, ${input.plan})
      RETURNING id, name, plan, created_at`;
    await tx`INSERT INTO campaigns (id, workspace_id, name, description, is_default)
      VALUES (${newId('campaign')}, ${id}, 'Default', 'Links created without a campaign join this one.', true)`;
    return { id: row!.id, name: row!.name, plan: row!.plan, createdAt: iso(row!.createdAt) };
  }) as Promise<Workspace>;
}

export async function countWorkspaces(sql: Sql): Promise<number> {
  const [row] = await sql<{ n: number }[]>`SELECT count(*)::int AS n FROM workspaces`;
  return row!.n;
}

export async function createApiKey(
  sql: Sql,
  input: { workspaceId: string; name?: string; scopes?: readonly Scope[] },
): Promise<IssuedApiKey> {
  const [workspace] = await sql`SELECT id FROM workspaces WHERE id = ${input.workspaceId}`;
  if (!workspace) throw new AppError('NOT_FOUND', `Workspace ${input.workspaceId} not found`);
  const scopes = [...(input.scopes ?? allScopes)];
  const generated = generateApiKey();
  const id = newId('apiKey');
  await sql`INSERT INTO api_keys (id, workspace_id, name, key_hash, key_prefix, scopes)
    VALUES (${id}, ${input.workspaceId}, ${input.name ?? ''}, ${generated.hash}, ${generated.prefix}, ${scopes})`;
  return { id, workspaceId: input.workspaceId, key: generated.key, prefix: generated.prefix, scopes };
}

/**
 * Revokes a key; revoking it again changes nothing (it keeps its first revocation time)
 * and says so with `alreadyRevoked`.
 */
export async function revokeApiKey(sql: Sql, keyId: string): Promise<ApiKeyInfo & { alreadyRevoked: boolean }> {
  const [row] = await sql<Array<ApiKeyRow & { alreadyRevoked: boolean }>>`
    WITH before AS (SELECT revoked_at FROM api_keys WHERE id = ${keyId} FOR UPDATE)
    UPDATE api_keys SET revoked_at = coalesce(api_keys.revoked_at, now()) FROM before WHERE api_keys.id = ${keyId}
    RETURNING api_keys.id, api_keys.workspace_id, api_keys.name, api_keys.key_prefix, api_keys.scopes, api_keys.created_at,
      api_keys.revoked_at, before.revoked_at IS NOT NULL AS already_revoked`;
  if (!row) throw new AppError('NOT_FOUND', `API key ${keyId} not found`);
  return { ...toKeyInfo(row), alreadyRevoked: row.alreadyRevoked };
}

export async function listApiKeys(sql: Sql, workspaceId: string): Promise<ApiKeyInfo[]> {
  const rows = await sql<ApiKeyRow[]>`
    SELECT id, workspace_id, name, key_prefix, scopes, created_at, revoked_at
    FROM api_keys WHERE workspace_id = ${workspaceId} ORDER BY created_at, id`;
  return rows.map(toKeyInfo);
}

/** The workspace and scopes behind a presented key, or null when unknown or revoked. */
export async function findPrincipal(sql: Sql, presentedKey: string): Promise<Principal | null> {
  return findPrincipalByHash(sql, hashApiKey(presentedKey));
}

/** findPrincipal by the key's hash (hashApiKey), as api_keys stores it. */
export async function findPrincipalByHash(sql: Sql, keyHash: string): Promise<Principal | null> {
  const [row] = await sql<{ id: string; workspaceId: string; plan: Plan; scopes: Scope[] }[]>`
    SELECT k.id, k.workspace_id, w.plan, k.scopes
    FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
    WHERE k.key_hash = ${keyHash} AND k.revoked_at IS NULL`;
  return row ? { keyId: row.id, workspaceId: row.workspaceId, plan: row.plan, scopes: new Set(row.scopes) } : null;
}

/** What a key may see of itself: its workspace and its own scopes (`GET /me`). */
export interface KeyIdentity {
  workspace: { id: string; name: string; plan: Plan };
  key: { id: string; name: string; prefix: string; scopes: Scope[]; createdAt: string };
}

export async function describeKey(sql: Sql, keyId: string): Promise<KeyIdentity | null> {
  const [row] = await sql<{ workspaceId: string; workspaceName: string; plan: Plan; id: string; name: string; keyPrefix: string; scopes: Scope[]; createdAt: Date }[]>`
    SELECT w.id AS workspace_id, w.name AS workspace_name, w.plan, k.id, k.name, k.key_prefix, k.scopes, k.created_at
    FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
    WHERE k.id = ${keyId} AND k.revoked_at IS NULL`;
  if (!row) return null;
  return {
    workspace: { id: row.workspaceId, name: row.workspaceName, plan: row.plan },
    key: { id: row.id, name: row.name, prefix: row.keyPrefix, scopes: row.scopes, createdAt: iso(row.createdAt) },
  };
}

interface ApiKeyRow {
  id: string;
  workspaceId: string;
  name: string;
  keyPrefix: string;
  scopes: Scope[];
  createdAt: Date;
  revokedAt: Date | null;
}

function toKeyInfo(row: ApiKeyRow): ApiKeyInfo {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    name: row.name,
    prefix: row.keyPrefix,
    scopes: row.scopes,
    createdAt: iso(row.createdAt),
    revokedAt: iso(row.revokedAt),
  };
}
