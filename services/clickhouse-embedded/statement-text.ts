/**
 * The little this endpoint needs to know about a statement's text without
 * parsing SQL: its first keyword, and the output format it names. Used for
 * routing (raw insert path, per-request SET/USE) and response headers only;
 * the engine remains the one that parses and validates.
 */

/** First keyword, upper-cased, after whitespace and comments; '' when there is none. */
export function leadingKeyword(sql: string): string {
  let i = 0;
  for (;;) {
    while (i < sql.length && /\s/.test(sql[i]!)) i++;
    if (sql.startsWith('--', i) || sql.startsWith('#', i)) {
      const eol = sql.indexOf('\n', i);
      if (eol < 0) return '';
      i = eol + 1;
    } else if (sql.startsWith('/*', i)) {
      const end = sql.indexOf('*/', i + 2);
      if (end < 0) return '';
      i = end + 2;
    } else {
      break;
    }
  }
  return /^[A-Za-z]+/.exec(sql.slice(i, i + 16))?.[0]?.toUpperCase() ?? '';
}

/** `INSERT ... FORMAT <name>` with the data to follow (the shape @clickhouse/client's insert() sends). */
export function isInsertWithFormat(sql: string): boolean {
  return leadingKeyword(sql) === 'INSERT' && /\bFORMAT\s+[A-Za-z0-9_]+\s*$/i.test(sql);
}

/** The format a trailing `FORMAT <name>` clause asks for (what @clickhouse/client's query() appends). */
export function trailingFormat(sql: string): string | undefined {
  return /\bFORMAT\s+([A-Za-z0-9_]+)\s*;?\s*$/i.exec(sql)?.[1];
}

/**
 * A lone SET or USE. Over HTTP without a session, ClickHouse runs such a
 * statement in a context that dies with the request, so it has no effect on
 * later queries. On our shared connection it would, so it is answered without
 * running it. (Settings belong in the request: clickhouse_settings.)
 */
export function isSessionOnlyStatement(sql: string): boolean {
  const keyword = leadingKeyword(sql);
  return (keyword === 'SET' || keyword === 'USE') && !sql.replace(/;\s*$/, '').includes(';');
}
