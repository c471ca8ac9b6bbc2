/**
 * Per-request settings and database on one long-lived chDB connection.
 *
 * A ClickHouse server starts every HTTP query (without session_id) from the
 * default profile and database, applying the URL's settings to that query
 * alone. chDB has one connection whose SET/USE persist, so before each
 * statement we emit a prefix that brings the connection from its current state
 * to the request's: SET the request's settings, put back every setting an
 * earlier request changed, USE the request's database. A leaked setting would
 * be a correctness bug, not a nuisance: an `insert_deduplication_token` left
 * behind would silently drop every later insert as a duplicate.
 *
 * Setting names reaching here are names the engine listed in system.settings
 * (see request-settings.ts), never raw request text, so they are emitted bare.
 *
 * Invariant: `applied` describes the connection exactly, except entries marked
 * UNKNOWN (after a prefix that failed, possibly part-way), which are always
 * re-emitted.
 */
const UNKNOWN = Symbol('unknown');

export class ConnectionState {
  private readonly baseline: ReadonlyMap<string, string>;
  private applied = new Map<string, string | typeof UNKNOWN>();
  private database: string | typeof UNKNOWN = 'default';

  /** @param baseline settings whose connection default differs from the engine's built-in one (`SET x = DEFAULT` would not restore them). */
  constructor(baseline: ReadonlyMap<string, string>) {
    this.baseline = baseline;
  }

  /** SQL that brings the connection to this request's settings and database; '' when it is there already. */
  prefixFor(settings: ReadonlyMap<string, string>, database: string): string {
    const assignments: string[] = [];
    for (const name of this.applied.keys()) {
      if (settings.has(name)) continue;
      const base = this.baseline.get(name);
      assignments.push(base === undefined ? `${name} = DEFAULT` : `${name} = ${stringLiteral(base)}`);
    }
    for (const [name, value] of settings) {
      if (this.applied.get(name) !== value) assignments.push(`${name} = ${stringLiteral(value)}`);
    }
    const statements: string[] = [];
    if (assignments.length > 0) statements.push(`SET ${assignments.join(', ')}`);
    if (this.database !== database) statements.push(`USE ${quoteIdentifier(database)}`);
    return statements.join('; ');
  }

  /** The prefix ran: the connection is now in the request's state. */
  committed(settings: ReadonlyMap<string, string>, database: string): void {
    this.applied = new Map(settings);
    this.database = database;
  }

  /** The prefix failed part-way, perhaps: whatever it touched is now unknown. */
  failed(settings: ReadonlyMap<string, string>): void {
    for (const name of settings.keys()) this.applied.set(name, UNKNOWN);
    for (const name of this.applied.keys()) this.applied.set(name, UNKNOWN);
    this.database = UNKNOWN;
  }
}

/**
 * A ClickHouse string literal. Setting values arrive as text (as in the URL of
 * a real server) and ClickHouse converts a string to any setting type, so
 * every value is quoted: no value can end the literal.
 */
export function stringLiteral(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'").replace(/\0/g, '\\0')}'`;
}

export function quoteIdentifier(name: string): string {
  return `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;
}
