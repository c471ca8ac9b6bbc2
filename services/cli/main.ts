import { ConfigError } from '../../shared/config/config-error.ts';
import { isAppError } from '../../shared/errors.ts';
import { openDatabase } from '../../shared/db/open-database.ts';
import { migrate } from '../../shared/db/migrate.ts';
import { loadCliConfig } from './config.ts';
import { runCommand, usage } from './commands.ts';

const argv = process.argv.slice(2);
if (argv.length === 0 || argv.includes('--help')) {
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}

let config: ReturnType<typeof loadCliConfig>;
try {
  config = loadCliConfig();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`error: ${err.message}\n`);
  process.exit(2);
}
let exitCode = 0;
// Only these two may start from nothing; any other command on a missing database is a wrong DATA_DIR.
const creates = argv[0] === 'migrate' || (argv[0] === 'workspace' && argv[1] === 'create');
let db: Awaited<ReturnType<typeof openDatabase>>;
try {
  db = await openDatabase({ databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR, applicationName: 'linkroute-cli', create: creates });
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  process.stderr.write(`error: ${err.message}\n`);
  process.exit(2);
}
try {
  // A fresh database (or one an older version left) is brought up to date first.
  if (argv[0] !== 'migrate') await migrate(db.sql);
  process.stdout.write(`${await runCommand(db.sql, argv)}\n`);
} catch (err) {
  // 2: the command or its configuration was wrong; 1: it failed.
  exitCode = (isAppError(err) && err.code !== 'INTERNAL_ERROR') || err instanceof ConfigError ? 2 : 1;
  // Which database answered: "workspace not found" in the wrong one reads very differently.
  process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n  (database: ${db.description})\n`);
} finally {
  await db.close();
}
process.exit(exitCode);
