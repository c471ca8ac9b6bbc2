import { Resolver } from 'node:dns/promises';

/** `dnsAnswered`: false when the lookup itself failed (a timeout, SERVFAIL), so nothing is known about the record. */
export type VerificationResult = { verified: true } | { verified: false; reason: string; dnsAnswered: boolean };

export interface DomainVerifier {
  /** Looks for `value` among the TXT records of `name`. */
  check(name: string, value: string): Promise<VerificationResult>;
}

/**
 * TXT lookups through the configured DNS servers (`ip` or `ip:port`), or the
 * system's when none are configured. Failures become reasons a person can act on.
 */
export function dnsVerifier(servers: string[], timeoutMs = 3_000): DomainVerifier {
  return {
    async check(name, value) {
      const resolver = new Resolver({ timeout: timeoutMs, tries: 2 });
      if (servers.length > 0) resolver.setServers(servers);
      try {
        const records = (await resolver.resolveTxt(name)).map((chunks) => chunks.join(''));
        if (records.includes(value)) return { verified: true };
        return { verified: false, reason: `TXT record ${name} found, but none equals the expected value`, dnsAnswered: true };
      } catch (err) {
        const code = (err as { code?: string }).code;
        if (code === 'ENOTFOUND' || code === 'ENODATA') return { verified: false, reason: `no TXT record at ${name} yet (DNS answered ${code})`, dnsAnswered: true };
        return { verified: false, reason: `DNS lookup of ${name} failed (${code ?? (err as Error).message}); try again`, dnsAnswered: false };
      }
    },
  };
}
