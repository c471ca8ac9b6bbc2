import { EventEmitter } from 'node:events';
import { isIP } from 'node:net';
import { Agent, errors, request } from 'undici';
import { blockedAddressReason } from '../../shared/webhooks/target-address.ts';
import { checkedLookup } from './checked-lookup.ts';
import { resolverLookup } from './resolver-lookup.ts';
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

/**
 * One attempt: POST the body, signed per Standard Webhooks (`webhook-id`,
 * `webhook-timestamp`, `webhook-signature`), to the endpoint; a 2xx answer within
 * `timeoutMs` is a success, anything else (redirects included: none is followed) a
 * failure. Keep-alive connections, pooled per origin, shared by the endpoints of a host.
 *
 * The pools have no cap of their own: the dispatcher runs at most
 * WEBHOOKS_MAX_IN_FLIGHT_PER_ENDPOINT attempts per endpoint, and an attempt must never
 * wait inside the client for a connection, since its deadline runs meanwhile. With the
 * cap per origin it had (32), endpoints sharing a host (many workspaces on one automation
 * service) queued behind each other there: a slow endpoint's attempts held every
 * connection, its neighbours' waited until one of those timed out, and timed out
 * themselves when several rounds came first (shared-host.int.test.ts: a fast endpoint's
 * attempts took 3.0 s behind a slow one's 4 s attempts with the cap, 9-37 ms without).
 *
 * HTTP client: undici, not node:http: 48 against 78 µs of the client's CPU per POST to a
 * loopback endpoint at 32 in flight (scratch measurement, 2026-11-28, this 2-core
 * machine), and node:http's client was the largest share of a sender's CPU in a profile
 * under `npm run bench -- webhooks`.
 */
export function webhookSender(options: { timeoutMs: number; allowPrivateTargets: boolean }): WebhookSender {
  const names = resolverLookup();
  const dispatcher = new Agent({
    connections: null,
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    // The socket connects only to an address checkedLookup has checked (SSRF), found by
    // c-ares rather than the thread pool's getaddrinfo (resolver-lookup.ts says why).
    connect: options.allowPrivateTargets ? {} : { lookup: checkedLookup(names.resolve) },
  });

  async function attempt(url: string, headers: Record<string, string>, body: string): Promise<Omit<Attempt, 'latencyMs'>> {
    // The timeouts above cover waiting for headers and idle gaps; this covers a slow trickle
    // too. An EventEmitter as the request's signal (undici takes one): an AbortController
    // (EventTarget) per attempt was 4 % of a sender's CPU in a profile under the bench.
    const deadline = new EventEmitter();
    let reading: { destroy(): void } | null = null;
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      if (reading) reading.destroy();
      else deadline.emit('abort');
    }, options.timeoutMs);
    try {
      const response = await request(url, { method: 'POST', headers, body, dispatcher, signal: deadline });
      const status = response.statusCode;
      reading = response.body;
      // The answer's status is all that counts: its body is read (at most MAX_RESPONSE_BYTES)
      // only so the connection can be reused. Without a signal dump() never rejects: a body
      // cut short (reset, over the limit, destroyed at the deadline) just ends it.
      await response.body.dump({ limit: MAX_RESPONSE_BYTES });
      const ok = status >= 200 && status < 300;
      return { status, ok, error: ok ? null : `answered ${status}` };
    } catch (err) {
      if (timedOut) return { status: null, ok: false, error: `no complete answer within ${options.timeoutMs} ms` };
      return { status: null, ok: false, error: err instanceof Error ? timeoutMessage(err) ?? err.message : String(err) };
    } finally {
      clearTimeout(timer);
    }
  }

  /** undici's own timeouts, said as the deadline says it. */
  function timeoutMessage(err: Error): string | null {
    return err instanceof errors.HeadersTimeoutError || err instanceof errors.BodyTimeoutError ? `no answer within ${options.timeoutMs} ms` : null;
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
            target.url,
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
      names.cancelAll();
      void dispatcher.destroy();
    },
  };
}
