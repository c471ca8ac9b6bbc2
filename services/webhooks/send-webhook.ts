import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { blockedAddressReason } from '../../shared/webhooks/target-address.ts';
import type { PayloadSigner } from './payload-signer.ts';

export interface Attempt {
  /** HTTP status, or null when no answer came (refused, timed out, blocked). */
  status: number | null;
  ok: boolean;
  latencyMs: number;
  error: string | null;
}

export interface WebhookSender {
  send(target: { url: string; signer: PayloadSigner }, message: { id: string; body: string }): Promise<Attempt>;
  close(): void;
}

/** What an attempt reads of an answer before it stops listening. */
const MAX_RESPONSE_BYTES = 64 * 1024;
const USER_AGENT = 'linkroute-webhooks/1 (+https://www.standardwebhooks.com)';

class BlockedTargetError extends Error {
  readonly code = 'EBLOCKEDTARGET';
}

/**
 * A DNS lookup that refuses names resolving to any address webhooks may not reach
 * (SSRF): the socket connects only to an address checked here, at send time, so a
 * name re-pointed at a private address after registration is refused too.
 */
const safeLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, '', 4);
    for (const { address } of addresses) {
      const reason = blockedAddressReason(address);
      if (reason) return callback(new BlockedTargetError(`${hostname} resolves to ${address} (${reason}); not an allowed webhook target`), '', 4);
    }
    if (options.all) (callback as unknown as (err: null, all: LookupAddress[]) => void)(null, addresses);
    else callback(null, addresses[0]!.address, addresses[0]!.family);
  });
};

/**
 * One attempt: POST the body, signed per Standard Webhooks (`webhook-id`,
 * `webhook-timestamp`, `webhook-signature`), to the endpoint; a 2xx answer within
 * `timeoutMs` is a success, anything else (redirects included) a failure. Keep-alive
 * sockets, at most `maxSocketsPerHost` per endpoint host.
 */
export function webhookSender(options: { timeoutMs: number; allowPrivateTargets: boolean; maxSocketsPerHost: number }): WebhookSender {
  const agentOptions = { keepAlive: true, maxSockets: options.maxSocketsPerHost, ...(options.allowPrivateTargets ? {} : { lookup: safeLookup }) };
  const agents = { 'http:': new http.Agent(agentOptions), 'https:': new https.Agent(agentOptions) };

  function attempt(url: URL, headers: Record<string, string>, body: string): Promise<Omit<Attempt, 'latencyMs'>> {
    return new Promise((resolve) => {
      const protocol = url.protocol === 'https:' ? 'https:' : 'http:';
      const request = (protocol === 'https:' ? https : http).request(url, { method: 'POST', agent: agents[protocol], headers, timeout: options.timeoutMs });
      let settled = false;
      const done = (result: Omit<Attempt, 'latencyMs'>) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        resolve(result);
      };
      // The socket timeout covers idle time; this covers a slow trickle too.
      const deadline = setTimeout(() => request.destroy(new Error(`no complete answer within ${options.timeoutMs} ms`)), options.timeoutMs);
      request.on('timeout', () => request.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
      request.on('error', (err) => done({ status: null, ok: false, error: err.message }));
      request.on('response', (response) => {
        const status = response.statusCode ?? 0;
        let read = 0;
        response.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > MAX_RESPONSE_BYTES) response.destroy();
        });
        const finish = () => done({ status, ok: status >= 200 && status < 300, error: status >= 200 && status < 300 ? null : `answered ${status}` });
        response.on('end', finish);
        response.on('close', finish);
        response.on('error', finish);
      });
      request.end(body);
    });
  }

  return {
    async send(target, message) {
      const started = performance.now();
      const url = new URL(target.url);
      const host = url.hostname.replace(/^\[|\]$/g, '');
      // A literal address is connected to without a lookup: check it here.
      const literalReason = !options.allowPrivateTargets && isIP(host) !== 0 ? blockedAddressReason(host) : null;
      const at = new Date();
      const result = literalReason
        ? { status: null, ok: false, error: `${host} is ${literalReason}; not an allowed webhook target` }
        : await attempt(
            url,
            {
              'content-type': 'application/json',
              'user-agent': USER_AGENT,
              'webhook-id': message.id,
              'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
              'webhook-signature': target.signer.sign(message.id, at, message.body),
            },
            message.body,
          );
      return { ...result, latencyMs: Math.round(performance.now() - started) };
    },
    close() {
      agents['http:'].destroy();
      agents['https:'].destroy();
    },
  };
}
