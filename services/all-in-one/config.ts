import { loadApiConfig, type ApiConfig } from '../api/config.ts';
import { loadIngesterConfig, type IngesterConfig } from '../ingester/config.ts';
import { loadRedirectorConfig, type RedirectorConfig } from '../redirector/config.ts';
import { loadWebhooksConfig, type WebhooksConfig } from '../webhooks/config.ts';

export interface AllInOneConfig {
  api: ApiConfig;
  redirector: RedirectorConfig;
  ingester: IngesterConfig;
  webhooks: WebhooksConfig;
}

/**
 * `npm start`'s configuration: each part's, from the one environment. It has one admin
 * port, the redirector's (ADMIN_PORT, default 9091), which serves the API's metrics too.
 * The API's own default (9092) is listened on by a standalone API only, so the API's
 * check that API_PORT differs from its admin port is made against the redirector's:
 * API_PORT=9092 is free here, and API_PORT=9091 is not.
 */
export function loadAllInOneConfig(env: Record<string, string | undefined> = process.env): AllInOneConfig {
  const redirector = loadRedirectorConfig(env);
  return {
    api: loadApiConfig({ ...env, ADMIN_PORT: String(redirector.ADMIN_PORT) }),
    redirector,
    ingester: loadIngesterConfig(env),
    webhooks: loadWebhooksConfig(env),
  };
}
