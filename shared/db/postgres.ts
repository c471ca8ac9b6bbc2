import postgres from 'postgres';

export type Sql = postgres.Sql<Record<string, never>>;

export interface PostgresOptions {
  /** Pool size. The embedded PGlite server executes one statement at a time, so 1 there. */
  max?: number;
  applicationName?: string;
}

/** Rows come back camelCased and `sql(object)` helpers take camelCase keys. */
export function connectPostgres(url: string, options: PostgresOptions = {}): Sql {
  return postgres(url, {
    max: options.max ?? 10,
    transform: postgres.camel,
    onnotice: () => {},
    connection: { application_name: options.applicationName ?? 'linkroute' },
  }) as unknown as Sql;
}

/** SQLSTATE of a unique-constraint violation, used to turn races into 409s. */
export const UNIQUE_VIOLATION = '23505';

export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint_name?: string };
  return e?.code === UNIQUE_VIOLATION && (constraint === undefined || e.constraint_name === constraint);
}
