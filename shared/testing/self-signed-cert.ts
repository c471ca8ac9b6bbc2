import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand } from './run-command.ts';

/** A throwaway certificate for localhost and 127.0.0.1 (its own CA), made by openssl, for TLS tests on loopback. */
export interface SelfSignedCert {
  certFile: string;
  keyFile: string;
  remove(): Promise<void>;
}

export async function createSelfSignedCert(): Promise<SelfSignedCert> {
  const dir = await mkdtemp(join(tmpdir(), 'linkroute-tls-'));
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  const result = await runCommand('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
    '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', '/CN=localhost',
    '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1', '-addext', 'basicConstraints=critical,CA:TRUE',
  ]);
  if (result.code !== 0) throw new Error(`openssl failed: ${result.stderr}`);
  return { certFile, keyFile, remove: () => rm(dir, { recursive: true, force: true }) };
}
