/**
 * LINKROUTE_SECRET: the key of click-id MACs and visitor hashes. Every redirector and
 * API instance of a deployment must hold the same one, or click ids issued by one are
 * forged to the others.
 *
 * The secret is text: the UTF-8 bytes of LINKROUTE_SECRET, or of the trimmed contents of
 * `$DATA_DIR/secret`. The generated file holds 32 random bytes as 64 hex characters, so
 * copying the file's contents into LINKROUTE_SECRET keeps the same key.
 */
import { randomBytes } from 'node:crypto';
import { link, mkdir, open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from './config-error.ts';

export const MIN_SECRET_LENGTH = 32;
const SECRET_FILE = 'secret';
const GENERATED_BYTES = 32;
/** A concurrent writer using the non-link fallback may be mid-write: re-read a few times. */
const READ_ATTEMPTS = 20;
const READ_RETRY_MS = 25;

function isErrno(err: unknown, ...codes: string[]): boolean {
  return err instanceof Error && codes.includes((err as NodeJS.ErrnoException).code ?? '');
}

async function readSecretFile(path: string): Promise<string | null> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch (err) {
    if (isErrno(err, 'ENOENT')) return null;
    throw err;
  }
}

/** Writes `content` to a new file, mode 0600, flushed to disk before it is published. */
async function writeNewFile(path: string, content: string, flag: 'wx'): Promise<void> {
  const handle = await open(path, flag, 0o600);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Publishes a freshly generated secret at `path` unless one exists. The complete file is
 * written under a unique temporary name and hard-linked into place: link() never
 * overwrites, so of several processes starting together exactly one wins and the others
 * read the winner's secret. Filesystems without hard links fall back to an exclusive
 * create (readers retry while that file is still short).
 */
async function publishNewSecret(path: string): Promise<void> {
  const content = `${randomBytes(GENERATED_BYTES).toString('hex')}\n`;
  const temporary = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  await writeNewFile(temporary, content, 'wx');
  try {
    await link(temporary, path);
  } catch (err) {
    if (isErrno(err, 'EEXIST')) return;
    if (!isErrno(err, 'EPERM', 'ENOTSUP', 'ENOSYS', 'EOPNOTSUPP', 'EXDEV')) throw err;
    try {
      await writeNewFile(path, content, 'wx');
    } catch (fallbackErr) {
      if (!isErrno(fallbackErr, 'EEXIST')) throw fallbackErr;
    }
  } finally {
    try {
      await unlink(temporary);
    } catch (err) {
      if (!isErrno(err, 'ENOENT')) throw err; // renamed into place, or never written
    }
  }
}

function fromText(text: string, source: string): Buffer {
  if (text.length < MIN_SECRET_LENGTH) {
    throw new ConfigError(`${source} must be at least ${MIN_SECRET_LENGTH} characters`, [
      { path: source, message: `must be at least ${MIN_SECRET_LENGTH} characters` },
    ]);
  }
  return Buffer.from(text, 'utf8');
}

/**
 * The deployment's secret: LINKROUTE_SECRET when set (at least 32 characters), else the
 * one in `$DATA_DIR/secret`, generated on first start.
 */
export async function resolveSecret(envValue: string | undefined, dataDir: string): Promise<Buffer> {
  if (envValue !== undefined && envValue !== '') return fromText(envValue, 'LINKROUTE_SECRET');
  await mkdir(dataDir, { recursive: true });
  return fromText(await readOrGenerateSecretFile(join(dataDir, SECRET_FILE)), join(dataDir, SECRET_FILE));
}

/**
 * The deployment's secret for a process that must hold the one the others hold and never
 * makes its own: LINKROUTE_SECRET when set, else `$DATA_DIR/secret` when it exists (written
 * by another process of this DATA_DIR: `npm start`, a redirector). Neither: a ConfigError
 * naming `who`, as a secret of its own would match no one's. Nothing is created.
 */
export async function resolveExistingSecret(envValue: string | undefined, dataDir: string, who: string): Promise<Buffer> {
  if (envValue !== undefined && envValue !== '') return fromText(envValue, 'LINKROUTE_SECRET');
  const path = join(dataDir, SECRET_FILE);
  const existing = await readSecretFile(path);
  if (existing !== null) return fromText(existing, path);
  const message = `LINKROUTE_SECRET is required for ${who}: set it to the redirectors' secret (or run it with their DATA_DIR, whose secret file it reads; there is none at ${path}). With a secret of its own it would match no other service's: click ids, visitor hashes and sealed webhook secrets would not verify across them`;
  throw new ConfigError(message, [{ path: 'LINKROUTE_SECRET', message: 'required: the redirectors\' secret' }]);
}

/**
 * The contents of the secret file at `path` (trimmed), which holds 64 random hex
 * characters, mode 0600, written on first use. Safe when several processes start together.
 */
export async function readOrGenerateSecretFile(path: string): Promise<string> {
  for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
    const existing = await readSecretFile(path);
    if (existing === null) {
      await publishNewSecret(path);
      continue;
    }
    if (existing.length >= MIN_SECRET_LENGTH) return existing;
    await new Promise((resolve) => setTimeout(resolve, READ_RETRY_MS));
  }
  // Still short after the retries: a truncated or hand-edited file, not a race (the caller's check reports it).
  return (await readSecretFile(path)) ?? '';
}
