/**
 * A small program against the generated client, type-checked by
 * shared/client/client-types.int.test.ts (and by `npm run typecheck`): the calls
 * below must compile, and each `@ts-expect-error` line must be an error, or tsc
 * fails ("unused directive"). So a client typed too loosely fails as surely as a
 * document that changed under its users. Never run, only compiled.
 */
import { createLinkrouteClient } from '../client.ts';

const client = createLinkrouteClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: () => 'lr_live_example' });

export async function correctCalls(): Promise<string[]> {
  const created = await client.POST('/links', {
    body: { destinationUrl: 'https://example.com/spring', tags: ['spring'], forwardQuery: 'override_utm' },
    headers: { 'Idempotency-Key': '3f0b8c2e-5d7a-4f5e-9a53-2f4c6f1d8e21' },
  });
  const out: string[] = [];
  if (created.data) out.push(created.data.data.shortUrl, created.data.data.title);
  if (created.error) out.push(created.error.error.code, created.error.error.message);

  const page = await client.GET('/links', { params: { query: { page: 2, limit: 50, tag: 'spring,summer', enabled: true } } });
  if (page.data) out.push(String(page.data.pagination.totalPages), ...page.data.data.map((link) => link.id));

  const one = await client.GET('/links/{id}', { params: { path: { id: 'link_x' }, query: { include: 'rules' } } });
  for (const rule of one.data?.data.rules ?? []) {
    if (rule.type === 'geo') out.push(...rule.conditions.countries, rule.conditions.operator);
    if (rule.type === 'percentage') out.push(String(rule.conditions.percentage));
  }

  await client.POST('/rules', { body: { campaignId: 'campaign_x', type: 'geo', conditions: { countries: ['US'] }, destinationUrl: 'https://example.com/us' } });
  await client.PATCH('/rules/{id}', { params: { path: { id: 'rule_x' } }, body: { conditions: { percentage: 20 }, priority: 70 } });
  await client.POST('/links/bulk', { body: { links: [{ destinationUrl: 'https://example.com/a' }] } });
  const hook = await client.POST('/webhooks', { body: { url: 'https://hooks.example.com/x', events: ['link.created'] } });
  if (hook.data) out.push(hook.data.data.secret);
  return out;
}

export async function wrongCalls(): Promise<void> {
  // @ts-expect-error a misspelt field name: destinationUrl is required, destinationURL does not exist
  await client.POST('/links', { body: { destinationURL: 'https://example.com' } });
  const created = await client.POST('/links', { body: { destinationUrl: 'https://example.com' } });
  // @ts-expect-error a misspelt field of the answer
  void created.data?.data.shortURL;
  // @ts-expect-error page is a number
  await client.GET('/links', { params: { query: { page: '2' } } });
  // @ts-expect-error include takes only 'rules'
  await client.GET('/links/{id}', { params: { path: { id: 'link_x' }, query: { include: 'everything' } } });
  // @ts-expect-error no such path
  await client.GET('/linkz');
  // @ts-expect-error a rule's type is one of geo, device, time, percentage
  await client.POST('/rules', { body: { campaignId: 'campaign_x', type: 'weather', conditions: {}, destinationUrl: 'https://example.com' } });
  const one = await client.GET('/links/{id}', { params: { path: { id: 'link_x' } } });
  const rule = one.data?.data.rules?.[0];
  // @ts-expect-error geo conditions have no percentage
  if (rule?.type === 'geo') void rule.conditions.percentage;
  // @ts-expect-error the answer of a link has no secret
  void one.data?.data.secret;
}
