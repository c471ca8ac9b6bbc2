import type { BrowserContext, Page, Route } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDashboardTest, type DashboardTest } from '../services/dashboard/testing/dashboard-harness.ts';

/**
 * The campaign and tag pickers against linkroute as `npm start` runs it: each whole
 * list (up to 10 requests of the workspace's hourly quota) is loaded once a minute
 * per signed-in key in a tab, whatever view mounts a picker; a load still out is joined,
 * not sent again, and dropped with its key; a campaign or tag this tab writes shows at once. The page's clock
 * (page.clock) is fixed and moved by hand: no wall clock decides what is loaded.
 */
type ListName = 'campaigns' | 'tags';

/** The picker loads a page asks from now on, per list: GETs of a whole list, 100 a page (the views' own tables ask 20). */
function pickerLoads(page: Page): Record<ListName, number> {
  const asked = { campaigns: 0, tags: 0 };
  page.on('request', (r) => {
    const url = new URL(r.url());
    if (r.method() !== 'GET' || url.searchParams.get('limit') !== '100') return;
    if (url.pathname === '/campaigns') asked.campaigns++;
    if (url.pathname === '/tags') asked.tags++;
  });
  return asked;
}

const START = Date.parse('2026-03-02T10:00:00Z');
/**
 * The page's Date fixed before the dashboard loads: the age of a kept list moves only
 * when the test moves it. Its timers and animation frames run as ever (Preact runs
 * effects on a frame; a paused clock would stop every load).
 */
const fixedClock = (page: Page, at = START) => page.clock.setFixedTime(at);

describe('dashboard pickers in chromium: every campaign and tag, loaded once a minute per signed-in key', () => {
  let t: DashboardTest;
  let context: BrowserContext;
  const url = (path: string) => `${t.linkroute.apiUrl}/dashboard/${path}`;

  beforeAll(async () => {
    t = await startDashboardTest();
    context = await t.newContext();
    await t.client.POST('/campaigns', { body: { name: 'Spring' } });
    await t.client.POST('/links', { body: { destinationUrl: 'https://example.com/spring', shortCode: 'spring', tags: ['alpha'] } });
  }, 180_000);
  afterAll(async () => {
    await t?.stop();
  });

  /** The workspace's campaigns by name, newest first, as the API lists them (and the pickers show them). */
  const campaignNames = async () => (await t.client.GET('/campaigns', { params: { query: { limit: 100 } } })).data!.data.map((c) => c.name);
  const nav = (page: Page) => page.getByRole('navigation', { name: 'Sections' });
  const campaignOptions = (page: Page) => page.getByLabel('Campaign', { exact: true }).locator('option').allTextContents();
  const tagOptions = (page: Page) => page.getByLabel('Tag', { exact: true }).locator('option').allTextContents();
  async function toOverview(page: Page) {
    await nav(page).getByRole('link', { name: 'Overview' }).click();
    await page.getByRole('heading', { name: 'Overview', exact: true }).waitFor();
  }
  async function toLinks(page: Page) {
    await nav(page).getByRole('link', { name: 'Links' }).click();
    await page.getByRole('heading', { name: 'Links', exact: true }).waitFor();
  }
  /** Signs out and in with `key` through the forms, without a reload: whatever the tab keeps in memory stays. */
  async function signOutAndIn(page: Page, key: string) {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  }
  const isCampaignList = (u: URL) => u.pathname === '/campaigns' && u.searchParams.get('limit') === '100';

  it('the overview, the links list and the link form share one load of each list for a minute; then the next picker loads it again', async () => {
    const page = await t.newPage(context);
    await fixedClock(page);
    const loads = pickerLoads(page);
    await t.signIn(page);
    await expect.poll(() => campaignOptions(page)).toEqual(['All campaigns', 'Spring', 'Default']);
    expect(loads).toEqual({ campaigns: 1, tags: 0 });

    await toLinks(page);
    await expect.poll(() => tagOptions(page)).toEqual(['All tags', 'alpha (1)']);
    // The link form: a campaign picker and tag suggestions, from what is kept.
    await page.getByRole('link', { name: 'Create link' }).click();
    await page.getByRole('heading', { name: 'Create link' }).waitFor();
    await expect.poll(() => campaignOptions(page)).toEqual(['Default campaign', 'Spring', 'Default']);
    await expect.poll(() => page.locator('datalist option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value))).toEqual(['alpha']);
    await toOverview(page);
    await expect.poll(() => campaignOptions(page)).toEqual(['All campaigns', 'Spring', 'Default']);
    await toLinks(page);
    await expect.poll(() => tagOptions(page)).toEqual(['All tags', 'alpha (1)']);
    expect(loads).toEqual({ campaigns: 1, tags: 1 });

    // A campaign made elsewhere (another tab, an integration) shows once the kept list is a minute old.
    await t.client.POST('/campaigns', { body: { name: 'Elsewhere' } });
    await fixedClock(page, START + 61_000);
    await toOverview(page);
    await expect.poll(() => campaignOptions(page)).toEqual(['All campaigns', 'Elsewhere', 'Spring', 'Default']);
    await toLinks(page);
    await expect.poll(() => tagOptions(page)).toEqual(['All tags', 'alpha (1)']);
    expect(loads).toEqual({ campaigns: 2, tags: 2 });
    await page.close();
  }, 90_000);

  it('a picker that mounts while the list is still loading joins that load: one request, not one per picker', async () => {
    const page = await t.newPage(context);
    await fixedClock(page);
    await t.signIn(page);
    await expect.poll(() => campaignOptions(page)).not.toEqual([]);
    await page.goto(url('links'));
    await page.getByRole('heading', { name: 'Links', exact: true }).waitFor();

    // The campaigns list answers slowly: the overview's load is still out when the link form mounts its own picker.
    const held: Route[] = [];
    const hold = (route: Route) => void held.push(route);
    await page.route(isCampaignList, hold);
    const loads = pickerLoads(page);
    await toOverview(page);
    await expect.poll(() => held.length).toBe(1);
    await toLinks(page);
    await page.getByRole('link', { name: 'Create link' }).click();
    await page.getByRole('heading', { name: 'Create link' }).waitFor();
    await page.unroute(isCampaignList, hold);
    // A request the page gave up on (the overview's, before the cache) can no longer go on.
    for (const route of held) await route.continue().catch(() => undefined);
    await expect.poll(() => campaignOptions(page)).toEqual(['Default campaign', ...(await campaignNames())]);
    expect(loads.campaigns).toBe(1);
    await page.close();
  }, 60_000);

  it('a campaign or tag this tab creates, and a tag a deleted link took away, show in the next picker at once', async () => {
    const page = await t.newPage(context);
    await fixedClock(page);
    const loads = pickerLoads(page);
    await t.signIn(page);
    const before = await campaignNames();
    await expect.poll(() => campaignOptions(page)).toEqual(['All campaigns', ...before]);

    // A campaign made on the campaigns page: the overview's picker offers it.
    await nav(page).getByRole('link', { name: 'Campaigns' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Made here');
    await page.getByRole('button', { name: 'Create campaign' }).click();
    await page.locator('tbody tr', { hasText: 'Made here' }).waitFor();
    await toOverview(page);
    await expect.poll(() => campaignOptions(page)).toEqual(['All campaigns', 'Made here', ...before]);
    expect(loads.campaigns).toBe(2);

    // A link saved with a new tag: the links list's tag picker offers it.
    await toLinks(page);
    await expect.poll(() => tagOptions(page)).toEqual(['All tags', 'alpha (1)']);
    await page.getByRole('link', { name: 'Create link' }).click();
    await page.getByLabel('Destination URL').fill('https://example.com/fresh');
    await page.getByLabel('Short code').fill('fresh');
    await page.getByLabel('Tags', { exact: true }).fill('fresh');
    await page.getByLabel('Tags', { exact: true }).press('Enter');
    await page.getByRole('button', { name: 'Create link' }).click();
    await page.getByRole('heading', { name: '/fresh' }).waitFor();
    await toLinks(page);
    await expect.poll(() => tagOptions(page)).toEqual(['All tags', 'alpha (1)', 'fresh (1)']);
    expect(loads.tags).toBe(2);

    // That link deleted: its tag had no other link, and leaves the picker of the same view.
    const row = page.locator('.links-table tbody tr[data-link-id]', { hasText: '/fresh' });
    await row.getByRole('button', { name: /^Delete / }).click();
    await page.getByRole('dialog', { name: 'Delete this link?' }).getByRole('button', { name: 'Delete link' }).click();
    await expect.poll(() => tagOptions(page)).toEqual(['All tags', 'alpha (1)']);
    expect(loads.tags).toBe(3);
    await page.close();
  }, 90_000);

  it('another workspace signed in in the same tab gets its own lists, not the last one’s', async () => {
    const other = await t.createKey({ workspace: { name: 'Other shop', plan: 'starter' } });
    const page = await t.newPage(context);
    await fixedClock(page);
    await t.signIn(page);
    await expect.poll(() => campaignOptions(page)).toContain('Spring');
    // Signed out and in with the other key without a reload: the kept lists are still in the tab.
    await signOutAndIn(page, other);
    await page.locator('.topbar [data-workspace]', { hasText: 'Other shop' }).waitFor();
    await expect.poll(() => campaignOptions(page)).toEqual(['All campaigns', 'Default']);
    await page.close();
  }, 60_000);

  it('a key of the same workspace signed in next gets its own lists: one that may not list campaigns is offered none, not the last key’s', async () => {
    const analyst = await t.createKey({ scopes: ['analytics:read'] });
    const page = await t.newPage(context);
    await fixedClock(page);
    await t.signIn(page);
    await expect.poll(() => campaignOptions(page)).toContain('Spring');
    const answers: number[] = [];
    page.on('response', (r) => {
      if (isCampaignList(new URL(r.url()))) answers.push(r.status());
    });
    await signOutAndIn(page, analyst);
    await page.getByRole('heading', { name: 'Overview', exact: true }).waitFor();
    // Asked with this key, and refused (campaigns are read with links:read): the picker offers no campaign, and says nothing of it.
    await expect.poll(() => answers).toEqual([403]);
    expect(await campaignOptions(page)).toEqual(['All campaigns']);
    expect(await page.locator('.list-failure').count()).toBe(0);
    await page.close();
  }, 60_000);

  it('a list still loading when the user signs out is dropped: none of its pages goes out with the next key, none is kept', async () => {
    const other = await t.createKey({ workspace: { name: 'Third shop', plan: 'starter' } });
    const page = await t.newPage(context);
    await fixedClock(page);
    const sent: Array<{ page: string | null; key: string | undefined }> = [];
    page.on('request', (r) => {
      const u = new URL(r.url());
      if (isCampaignList(u)) sent.push({ page: u.searchParams.get('page'), key: r.headers()['authorization'] });
    });
    // The first key's first page answers late, and says there is a second.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let answered!: () => void;
    const done = new Promise<void>((resolve) => (answered = resolve));
    await page.route(isCampaignList, async (route) => {
      if (route.request().headers()['authorization'] !== `Bearer ${t.linkroute.apiKey}`) return route.continue();
      const response = await route.fetch();
      const body = await response.json();
      body.pagination.totalPages = 2;
      await gate;
      // The page may have given the request up meanwhile: nothing to answer then.
      await route.fulfill({ response, json: body }).catch(() => undefined);
      answered();
    });
    await t.signIn(page);
    await expect.poll(() => sent.length).toBe(1);
    await signOutAndIn(page, other);
    await page.locator('.topbar [data-workspace]', { hasText: 'Third shop' }).waitFor();
    await expect.poll(() => campaignOptions(page)).toEqual(['All campaigns', 'Default']);
    release();
    await done;
    // Whatever that answer sets off has gone out by the time the page has run a few tasks more.
    await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 200)));
    expect(sent).toEqual([
      { page: '1', key: `Bearer ${t.linkroute.apiKey}` },
      { page: '1', key: `Bearer ${other}` },
    ]);
    await page.close();
  }, 60_000);

  it('a picker that joined a load which never answers says, when the load is given up, that the API did not answer within 30 s; its retry loads again', async () => {
    const page = await t.newPage(context);
    // Timers moved on by hand (and in real time too: an installed clock cannot be paused, see dashboard-live-states).
    await page.clock.install();
    const held: Route[] = [];
    const hold = (route: Route) => void held.push(route);
    await page.route(isCampaignList, hold);
    await t.signIn(page);
    // The overview's picker starts the load; 20 s on, the link form's picker joins it, 10 s before it is given up.
    await expect.poll(() => held.length).toBe(1);
    await page.clock.runFor(20_000);
    await toLinks(page);
    await page.getByRole('link', { name: 'Create link' }).click();
    await page.getByRole('heading', { name: 'Create link' }).waitFor();
    await page.clock.runFor(11_000);
    const failure = page.locator('.list-failure');
    await failure.waitFor();
    expect(await failure.textContent()).toContain('Campaigns did not load: The API did not answer within 30 s.');
    await t.expectAccessible(page, 'a picker whose list did not load');

    await page.unroute(isCampaignList, hold);
    await failure.getByRole('button', { name: 'Retry' }).click();
    await expect.poll(() => campaignOptions(page)).toEqual(['Default campaign', ...(await campaignNames())]);
    expect(await failure.count()).toBe(0);
    await page.close();
  }, 60_000);

  it('tag suggestions in the link form that did not load say so beside the field, with a retry that loads them', async () => {
    const page = await t.newPage(context);
    await fixedClock(page);
    const isTagList = (u: URL) => u.pathname === '/tags';
    const refuse = (route: Route) =>
      route.fulfill({ status: 503, contentType: 'application/json', body: JSON.stringify({ success: false, error: { code: 'SERVICE_UNAVAILABLE', message: 'Database unavailable' } }) });
    await page.route(isTagList, refuse);
    await t.signIn(page);
    await toLinks(page);
    await page.getByRole('link', { name: 'Create link' }).click();
    await page.getByRole('heading', { name: 'Create link' }).waitFor();
    const failure = page.locator('.list-failure', { hasText: 'Tag suggestions' });
    await failure.waitFor();
    expect(await failure.textContent()).toContain('Tag suggestions did not load:');
    // The field itself still takes a tag typed in.
    await page.locator('#f-tags').waitFor();
    await t.expectAccessible(page, 'tag suggestions that did not load');

    await page.unroute(isTagList, refuse);
    await failure.getByRole('button', { name: 'Retry' }).click();
    await expect.poll(() => page.locator('#f-tags-suggestions option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value))).toContain('alpha');
    expect(await failure.count()).toBe(0);
    await page.close();
  }, 60_000);

  it('no page error and no request beyond loopback in any of it', () => {
    expect(t.errors).toEqual([]);
    expect(t.offOrigin).toEqual([]);
  });
});
