import { parseArgs } from 'node:util';
import { AppError } from '../../shared/errors.ts';
import type { Sql } from '../../shared/db/postgres.ts';
import { migrate } from '../../shared/db/migrate.ts';
import { createApiKey, createWorkspace, listApiKeys, revokeApiKey } from '../../shared/db/workspaces.ts';
import { plans, scopes as allScopes, type Plan, type Scope } from '../../shared/schemas/common.ts';

export const usage = `linkroute command-line tool

  npm run cli -- migrate
  npm run cli -- workspace create --name <name> --plan <starter|pro|enterprise> [--json]
  npm run cli -- workspace list [--json]
  npm run cli -- key create --workspace <ws_...> [--name <name>] [--scopes a,b] [--json]
  npm run cli -- key list --workspace <ws_...> [--json]
  npm run cli -- key revoke <key_...> [--json]

Scopes: ${allScopes.join(', ')} (default: all).
Uses DATABASE_URL, or the embedded database under DATA_DIR (also while npm start runs).`;

const usageError = (message: string) => new AppError('VALIDATION_ERROR', `${message}\n\n${usage}`);

/** Runs one command; returns the text to print. Throws AppError on bad usage. */
export async function runCommand(sql: Sql, argv: string[]): Promise<string> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      name: { type: 'string' },
      plan: { type: 'string' },
      workspace: { type: 'string' },
      scopes: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  const [group, action, arg] = positionals;
  const json = values.json === true;
  if (values.help || !group) return usage;

  if (group === 'migrate') {
    const result = await migrate(sql);
    return json ? JSON.stringify(result) : `Applied ${result.applied.length} migration(s)${result.applied.length ? `: ${result.applied.join(', ')}` : ''}.`;
  }

  if (group === 'workspace' && action === 'create') {
    if (!values.name?.trim()) throw usageError('--name is required');
    const plan = values.plan ?? 'starter';
    if (!plans.includes(plan as Plan)) throw usageError(`--plan must be one of ${plans.join(', ')}`);
    const workspace = await createWorkspace(sql, { name: values.name.trim(), plan: plan as Plan });
    const key = await createApiKey(sql, { workspaceId: workspace.id, name: 'first key' });
    if (json) return JSON.stringify({ workspaceId: workspace.id, apiKey: key.key });
    return `Workspace ${workspace.id} (${workspace.name}, ${workspace.plan})\nAPI key (shown once): ${key.key}`;
  }

  if (group === 'workspace' && action === 'list') {
    const rows = await sql<{ id: string; name: string; plan: string }[]>`SELECT id, name, plan FROM workspaces ORDER BY created_at, id`;
    return json ? JSON.stringify(rows.map((r) => ({ ...r }))) : rows.map((r) => `${r.id}  ${r.plan.padEnd(10)}  ${r.name}`).join('\n');
  }

  if (group === 'key' && action === 'create') {
    if (!values.workspace) throw usageError('--workspace is required');
    const scopes = values.scopes === undefined ? undefined : parseScopes(values.scopes);
    const key = await createApiKey(sql, { workspaceId: values.workspace, name: values.name ?? '', ...(scopes ? { scopes } : {}) });
    if (json) return JSON.stringify({ keyId: key.id, workspaceId: key.workspaceId, apiKey: key.key, scopes: key.scopes });
    return `API key ${key.id} for ${key.workspaceId} (shown once): ${key.key}\nScopes: ${key.scopes.join(', ')}`;
  }

  if (group === 'key' && action === 'list') {
    if (!values.workspace) throw usageError('--workspace is required');
    const keys = await listApiKeys(sql, values.workspace);
    if (json) return JSON.stringify(keys);
    return keys.map((k) => `${k.id}  ${k.prefix}…  ${k.revokedAt ? `revoked ${k.revokedAt}` : 'active'}  ${k.scopes.join(',')}`).join('\n');
  }

  if (group === 'key' && action === 'revoke') {
    if (!arg) throw usageError('name the key id to revoke: key revoke <key_...>');
    const key = await revokeApiKey(sql, arg);
    if (json) return JSON.stringify({ keyId: key.id, revokedAt: key.revokedAt, alreadyRevoked: key.alreadyRevoked });
    return key.alreadyRevoked ? `${key.id} (${key.prefix}…) was already revoked at ${key.revokedAt}; nothing changed` : `Revoked ${key.id} (${key.prefix}…) at ${key.revokedAt}`;
  }

  throw usageError(`Unknown command: ${positionals.join(' ')}`);
}

function parseScopes(text: string): Scope[] {
  const list = text.split(',').map((s) => s.trim()).filter(Boolean);
  const unknown = list.filter((s) => !allScopes.includes(s as Scope));
  if (list.length === 0 || unknown.length > 0) throw usageError(`unknown scope(s): ${unknown.join(', ') || '(none given)'}`);
  return list as Scope[];
}
