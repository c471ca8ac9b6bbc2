import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { credsAuthenticator, type ConnectionOptions } from 'nats';
import { parseNatsUrl, type NatsTarget } from '../config/nats-env.ts';

/**
 * nats.js connection options for a target (see shared/config/nats-env.ts): its servers,
 * its credentials and TLS. A string is parsed as NATS_URL is (tests and tools pass one).
 *
 * The creds file is read now, so a missing or unreadable one fails the start, and again
 * at each reconnect, so a rotated file is picked up without a restart. With TLS the
 * server's certificate is always verified: against NATS_TLS_CA when given, else against
 * Node's trusted CAs.
 */
export async function natsConnectOptions(target: NatsTarget | string): Promise<ConnectionOptions> {
  const t: NatsTarget = typeof target === 'string' ? parseNatsUrl(target) : target;
  const options: ConnectionOptions = { servers: t.servers };
  if (t.auth.kind === 'user') Object.assign(options, { user: t.auth.user, pass: t.auth.pass });
  if (t.auth.kind === 'token') options.token = t.auth.token;
  if (t.credsFile !== undefined) {
    const path = t.credsFile;
    await readFile(path);
    options.authenticator = credsAuthenticator(() => readFileSync(path));
  }
  if (t.tls || t.tlsCaFile !== undefined) {
    // An object (even empty) makes TLS required: a server that does not offer it is refused.
    options.tls = t.tlsCaFile === undefined ? {} : { ca: await readFile(t.tlsCaFile, 'utf8') };
  }
  return options;
}

/** The target's servers for logs and errors, never its credentials. */
export function describeNatsTarget(target: NatsTarget | string): string {
  return typeof target === 'string' ? parseNatsUrl(target).redacted : target.redacted;
}
