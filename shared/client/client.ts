import createClient, { type Client } from 'openapi-fetch';
import type { paths } from './openapi-types.ts';

export type { paths, operations } from './openapi-types.ts';

/**
 * A typed linkroute API client: openapi-fetch over the types generated from the
 * OpenAPI document (services/api/openapi/client-types.ts writes them). Every path, parameter and body is checked by
 * the compiler against the API as it is now.
 */
export type LinkrouteClient = Client<paths>;

export interface ClientOptions {
  baseUrl: string;
  /** The API key, read per request (a dashboard may sign out between requests). */
  apiKey: () => string | null;
  fetch?: typeof fetch;
}

export function createLinkrouteClient(options: ClientOptions): LinkrouteClient {
  const client = createClient<paths>({ baseUrl: options.baseUrl, ...(options.fetch ? { fetch: options.fetch } : {}) });
  client.use({
    onRequest({ request }) {
      const key = options.apiKey();
      if (key && !request.headers.has('Authorization')) request.headers.set('Authorization', `Bearer ${key}`);
      return request;
    },
  });
  return client;
}

/** The `data` of a path's successful GET answer. */
export type GetData<P extends keyof paths> = paths[P] extends { get: { responses: { 200: { content: { 'application/json': { data: infer D } } } } } } ? D : never;
