/**
 * The redirector's HTTP layer on uWebSockets.js.
 *
 *   GET|HEAD /{shortCode}   redirect / 204 / deep link / password form / 404 / 410
 *   POST     /{shortCode}   password form submission (password-post.ts)
 *   GET|HEAD /i/{shortCode} impression GIF
 *   GET|HEAD /p.gif         conversion pixel GIF (?clickId=...)
 *   GET|HEAD /health        200 while the process runs (for load balancers; says nothing else)
 *   anything else           404 page
 *
 * Nothing else is public: /ready (links held) and /metrics (every tenant's traffic)
 * are on the admin port (admin-server.ts), loopback by default. `/ready` and
 * `/metrics` here are short codes, reserved, so never a link: 404.
 *
 * Routing is uWS's: `/:code` matches exactly one non-empty path segment, and `/:code/`
 * the same with one trailing slash (a pasted or typed link often gains one; Dub and
 * Bitly answer it too), so `/a/b`, `/a//` and `/` fall through to the 404 catch-all.
 * The GET/HEAD path is synchronous.
 */
import uWS, { type HttpRequest, type HttpResponse, type TemplatedApp, type us_listen_socket } from 'uWebSockets.js';
import type { Registry } from 'prom-client';
import { errorFields } from '../../shared/logger.ts';
import { createMetricsRegistry } from '../../shared/metrics/metrics-registry.ts';
import type { RedirectorContext, RedirectorDeps } from './context.ts';
import { notFoundPage } from './pages/html-pages.ts';
import { createPasswordPostHandler } from './serving/password-post.ts';
import { parsePixelConversion } from './serving/pixel.ts';
import { captureRequest } from './serving/request-facts.ts';
import { sendGif, sendInternalError, sendJson, sendPage } from './pages/responses.ts';
import { createLinkServer } from './serving/serve-link.ts';
import { LATENCY_SAMPLE_EVERY, PixelRefusals, redirectLatencyHistogram, RequestCounters } from './metrics/request-counters.ts';
import { registerRequestMetrics } from './metrics/redirector-metrics.ts';

export type { RedirectorDeps } from './context.ts';

/** A route as uWS takes it; `any` is every method. */
export interface RedirectorRoute {
  method: 'get' | 'head' | 'post' | 'any';
  pattern: string;
}

export interface RedirectorApp {
  listen(port: number, host: string): Promise<{ port: number; url: string }>;
  /** The routes it serves, in matching order (for the generated bad-input test). */
  readonly routes: readonly RedirectorRoute[];
  close(): void;
  /** This instance's metrics, served on the admin port; the caller adds what it owns (events, snapshot). */
  readonly metrics: Registry;
}

/** TemplatedApp.close() exists at run time in uWS 20.30 but is missing from its typings. */
type ClosableApp = TemplatedApp & { close?: () => void };

export function createRedirectorApp(deps: RedirectorDeps): RedirectorApp {
  const counters = new RequestCounters();
  const ctx: RedirectorContext = { ...deps, now: deps.now ?? Date.now, onPixelConversion: deps.onPixelConversion, passwordFailures: deps.passwordFailures, counters };
  const { lookup, config, logger, secret } = ctx;
  const latency = redirectLatencyHistogram();
  const metrics = createMetricsRegistry();
  const refusals = new PixelRefusals();
  registerRequestMetrics(metrics, counters, latency, refusals);
  let untilSample = LATENCY_SAMPLE_EVERY;
  const server = createLinkServer(ctx);

  /**
   * A throw must not take the process down (uWS aborts on a handler that returns
   * without answering): answer 500 when nothing was written yet. Handlers write their
   * response last, after everything that can throw.
   */
  function guarded(name: string, head: boolean, handler: (res: HttpResponse, req: HttpRequest, head: boolean) => void) {
    return (res: HttpResponse, req: HttpRequest): void => {
      try {
        handler(res, req, head);
      } catch (err) {
        counters.error++;
        logger.error(`${name} failed`, errorFields(err));
        sendInternalError(res, head);
      }
    };
  }

  function serveCode(res: HttpResponse, req: HttpRequest, head: boolean): void {
    const info = captureRequest(res, req, config);
    const link = lookup.find(info.host, info.code);
    if (link === undefined) {
      counters.notFound++;
      sendPage(res, notFoundPage, head);
    } else server.serve(res, info, link, head, null);
  }

  /** Times one request in LATENCY_SAMPLE_EVERY (request-counters.ts says why not all). */
  function onLink(res: HttpResponse, req: HttpRequest, head: boolean): void {
    if (--untilSample !== 0) {
      serveCode(res, req, head);
      return;
    }
    untilSample = LATENCY_SAMPLE_EVERY;
    const started = performance.now();
    serveCode(res, req, head);
    latency.observe((performance.now() - started) / 1000);
  }

  function onImpression(res: HttpResponse, req: HttpRequest, head: boolean): void {
    const info = captureRequest(res, req, config);
    // Unknown codes get the GIF too, so a page never shows a broken image.
    counters.impression++;
    sendGif(res, head);
    if (head) return;
    const link = lookup.find(info.host, info.code);
    if (link !== undefined && link.compiled.enabled) server.recordImpression(info, link);
  }

  function onPixel(res: HttpResponse, req: HttpRequest, head: boolean): void {
    const query = req.getQuery() ?? '';
    counters.pixel++;
    sendGif(res, head);
    const report = ctx.onPixelConversion;
    if (head || report === undefined) return;
    const conversion = parsePixelConversion(secret, query, config.PIXEL_MAX_VALUE);
    if (conversion === null) return;
    if (lookup.findById(conversion.linkId)?.compiled.trackingType !== 'pixel') return;
    if ('refused' in conversion) {
      refusals.byReason[conversion.refused]++;
      return;
    }
    try {
      report(conversion);
    } catch (err) {
      logger.error('onPixelConversion failed', { linkId: conversion.linkId, ...errorFields(err) });
    }
  }

  const passwordPost = createPasswordPostHandler(ctx, server);
  const health = (res: HttpResponse, _req: HttpRequest, head: boolean) => sendJson(res, '200 OK', '{"status":"ok"}', head);
  const notFound = (res: HttpResponse, req: HttpRequest) => {
    counters.notFound++;
    sendPage(res, notFoundPage, req.getMethod() === 'head');
  };
  // Everything the public port answers; uWS picks static segments over :code, and :code over the catch-all.
  const routes: Array<RedirectorRoute & { handler: (res: HttpResponse, req: HttpRequest) => void }> = [
    { method: 'get', pattern: '/health', handler: guarded('health', false, health) },
    { method: 'head', pattern: '/health', handler: guarded('health', true, health) },
    { method: 'get', pattern: '/p.gif', handler: guarded('pixel', false, onPixel) },
    { method: 'head', pattern: '/p.gif', handler: guarded('pixel', true, onPixel) },
    // One trailing slash allowed, as on short links (an <img> pasted from a short URL with its slash).
    ...['/i/:code', '/i/:code/'].flatMap((pattern): typeof routes => [
      { method: 'get', pattern, handler: guarded('impression', false, onImpression) },
      { method: 'head', pattern, handler: guarded('impression', true, onImpression) },
    ]),
    ...['/:code', '/:code/'].flatMap((pattern): typeof routes => [
      { method: 'get', pattern, handler: guarded('redirect', false, onLink) },
      { method: 'head', pattern, handler: guarded('redirect', true, onLink) },
      { method: 'post', pattern, handler: guarded('password', false, passwordPost) },
    ]),
    { method: 'any', pattern: '/*', handler: guarded('not found', false, notFound) },
  ];
  const app: ClosableApp = uWS.App();
  for (const route of routes) app[route.method](route.pattern, route.handler);

  let listenSocket: us_listen_socket | null = null;

  return {
    metrics,
    routes: routes.map(({ method, pattern }) => ({ method, pattern })),
    listen(port: number, host: string) {
      return new Promise((resolve, reject) => {
        app.listen(host, port, (socket) => {
          if (socket === false) {
            reject(new Error(`redirector could not listen on ${host}:${port}`));
            return;
          }
          listenSocket = socket;
          const actual = uWS.us_socket_local_port(socket as unknown as uWS.us_socket);
          const urlHost = host.includes(':') ? `[${host}]` : host;
          resolve({ port: actual, url: `http://${urlHost}:${actual}` });
        });
      });
    },
    close() {
      if (listenSocket !== null) uWS.us_listen_socket_close(listenSocket);
      listenSocket = null;
      // Also ends keep-alive connections, so a closed app lets the process exit.
      app.close?.();
    },
  };
}
