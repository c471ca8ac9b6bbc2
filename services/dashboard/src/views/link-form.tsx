import { useState } from 'preact/hooks';
import { useTitle } from '../document-title.ts';
import { ApiFailure, api, unwrap, type Link, type LinkCreate, type LinkUpdate } from '../api.ts';
import { ErrorBox } from '../components/error-box.tsx';
import { ErrorSummary, FieldError, invalidProps, problemsOf, unreadNumbers, type FieldMap } from '../components/field-errors.tsx';
import { ListFailure } from '../components/list-failure.tsx';
import { announce } from '../components/status-region.tsx';
import { TagInput, withTags } from '../components/tag-input.tsx';
import { href, navigate, type Location } from '../router.ts';
import { useLoad } from '../use-load.ts';
import { allTags, useCampaignOptions } from '../all-pages.ts';
import { invalidateList } from '../list-cache.ts';
import { linkName } from '../format.ts';

type Behavior = Link['redirectBehavior'];
type Tracking = Link['trackingType'];
type ForwardQuery = Link['forwardQuery'];

/** The select's values for forwardQuery (an option value is text). */
const forwardQueryOptions: Array<[string, ForwardQuery, string]> = [
  ['true', true, 'Append the visitor’s parameters the destination does not have'],
  ['override_utm', 'override_utm', 'Append them, and the visitor’s utm_* replace the destination’s'],
  ['false', false, 'Drop them: always the destination as it is'],
];

interface Draft {
  shortCode: string;
  destinationUrl: string;
  defaultDestination: string;
  title: string;
  description: string;
  campaignId: string;
  domainId: string;
  enabled: boolean;
  password: string;
  removePassword: boolean;
  expiresAt: string;
  expiredUrl: string;
  clicksLimit: string;
  redirectBehavior: Behavior;
  deepLinkEnabled: boolean;
  deepLinkIos: string;
  deepLinkAndroid: string;
  deepLinkFallbackUrl: string;
  conversionTracking: boolean;
  trackingType: Tracking;
  tags: string[];
  /** Typed in the tag field but not added yet: saved too. */
  tagText: string;
  forwardQuery: string;
}

/** `datetime-local` works in the browser's zone; the API takes ISO instants. */
const toLocalInput = (iso: string | null) => {
  if (!iso) return '';
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};
const fromLocalInput = (value: string) => (value ? new Date(value).toISOString() : null);

function draftOf(link: Link | undefined, campaignId: string): Draft {
  return {
    shortCode: link?.shortCode ?? '',
    destinationUrl: link?.destinationUrl ?? '',
    defaultDestination: link && link.defaultDestination !== link.destinationUrl ? link.defaultDestination : '',
    title: link?.title ?? '',
    description: link?.description ?? '',
    campaignId: link?.campaignId ?? campaignId,
    domainId: link?.domainId ?? '',
    enabled: link?.enabled ?? true,
    password: '',
    removePassword: false,
    expiresAt: toLocalInput(link?.expiresAt ?? null),
    expiredUrl: link?.expiredUrl ?? '',
    clicksLimit: link?.clicksLimit ? String(link.clicksLimit) : '',
    redirectBehavior: link?.redirectBehavior ?? 'auto',
    deepLinkEnabled: link?.deepLinkEnabled ?? false,
    deepLinkIos: link?.deepLinkIos ?? '',
    deepLinkAndroid: link?.deepLinkAndroid ?? '',
    deepLinkFallbackUrl: link?.deepLinkFallbackUrl ?? '',
    conversionTracking: link?.conversionTracking ?? false,
    trackingType: link?.trackingType ?? 'pixel',
    tags: link?.tags ?? [],
    tagText: '',
    forwardQuery: String(link?.forwardQuery ?? true),
  };
}

/** The visible label of each field the API may refuse, by the API's name for it (SPEC 2.1); each control's id is `f-` and that name. */
const labels: Record<string, string> = {
  destinationUrl: 'Destination URL',
  defaultDestination: 'Default destination',
  shortCode: 'Short code',
  domainId: 'Domain',
  redirectBehavior: 'Redirect behaviour',
  forwardQuery: 'Visitor’s query string',
  title: 'Title',
  description: 'Description',
  campaignId: 'Campaign',
  tags: 'Tags',
  enabled: 'Enabled',
  expiresAt: 'Expires at',
  expiredUrl: 'After expiry, redirect to',
  clicksLimit: 'Clicks limit',
  password: 'Password',
  deepLinkEnabled: 'Open the app on iOS and Android',
  deepLinkIos: 'iOS URL scheme',
  deepLinkAndroid: 'Android intent',
  deepLinkFallbackUrl: 'Fallback URL',
  conversionTracking: 'Append clickId to the destination',
  trackingType: 'Tracking type',
};
const fields: FieldMap = Object.fromEntries(Object.entries(labels).map(([name, label]) => [name, { id: `f-${name}`, label }]));

const orNull = (s: string) => (s.trim() === '' ? null : s.trim());

/** Every field a client may set, as the API names them (SPEC 2.1). */
function fieldsOf(d: Draft) {
  return {
    destinationUrl: d.destinationUrl.trim(),
    defaultDestination: orNull(d.defaultDestination),
    title: d.title,
    description: d.description,
    campaignId: d.campaignId,
    enabled: d.enabled,
    expiresAt: fromLocalInput(d.expiresAt),
    expiredUrl: orNull(d.expiredUrl),
    clicksLimit: d.clicksLimit.trim() === '' ? null : Number(d.clicksLimit),
    redirectBehavior: d.redirectBehavior,
    deepLinkEnabled: d.deepLinkEnabled,
    deepLinkIos: orNull(d.deepLinkIos),
    deepLinkAndroid: orNull(d.deepLinkAndroid),
    deepLinkFallbackUrl: orNull(d.deepLinkFallbackUrl),
    conversionTracking: d.conversionTracking,
    trackingType: d.trackingType,
    tags: withTags(d.tags, d.tagText),
    forwardQuery: forwardQueryOptions.find(([value]) => value === d.forwardQuery)![1],
  };
}

export function LinkFormView({ loc, linkId }: { loc: Location; linkId: string | null }) {
  const existing = useLoad(async (signal) => (linkId ? (await unwrap(api.GET('/links/{id}', { params: { path: { id: linkId } }, signal }))).data : undefined), [linkId]);
  useTitle(linkId === null ? 'New link' : existing.data ? `Edit ${linkName(existing.data)}` : 'Edit link');
  if (existing.error) return <ErrorBox error={existing.error} onRetry={existing.reload} />;
  if (linkId && !existing.data) return <p class="loading">Loading link…</p>;
  return <LinkForm link={existing.data} campaignId={loc.query.get('campaignId') ?? ''} />;
}

function LinkForm({ link, campaignId }: { link: Link | undefined; campaignId: string }) {
  const [draft, setDraft] = useState(() => draftOf(link, campaignId));
  const [error, setError] = useState<ApiFailure | undefined>();
  const [saving, setSaving] = useState(false);
  const { campaigns, error: campaignsError, reload: reloadCampaigns } = useCampaignOptions(draft.campaignId || undefined);
  const domains = useLoad((signal) => unwrap(api.GET('/domains', { params: { query: { limit: 100, status: 'verified' } }, signal })), []);
  const knownTags = useLoad(allTags, []);
  const set = <K extends keyof Draft>(name: K, value: Draft[K]) => setDraft((d) => ({ ...d, [name]: value }));
  const problems = problemsOf(error, fields);
  /** aria-invalid and aria-describedby of a control, and the message shown after it. */
  const invalid = (name: string, help?: string) => invalidProps(problems, `f-${name}`, help);
  const fieldError = (name: string) => <FieldError problems={problems} id={`f-${name}`} />;

  const text = (name: keyof Draft, label: string, options: { type?: string; help?: string; required?: boolean; placeholder?: string } = {}) => (
    <div class="field">
      <label for={`f-${name}`}>{label}</label>
      <input
        id={`f-${name}`}
        name={name}
        type={(options.type ?? 'text') as 'text'}
        value={draft[name] as string}
        required={options.required}
        placeholder={options.placeholder}
        {...invalid(name, options.help ? `f-${name}-help` : undefined)}
        onInput={(e) => set(name, e.currentTarget.value as never)}
      />
      {fieldError(name)}
      {options.help && (
        <small id={`f-${name}-help`} class="help">
          {options.help}
        </small>
      )}
    </div>
  );
  const check = (name: keyof Draft, label: string) => (
    <div class="field check">
      <input id={`f-${name}`} name={name} type="checkbox" checked={draft[name] as boolean} {...invalid(name)} onChange={(e) => set(name, e.currentTarget.checked as never)} />
      <label for={`f-${name}`}>{label}</label>
      {fieldError(name)}
    </div>
  );

  async function submit(event: Event) {
    event.preventDefault();
    // The button is aria-disabled while saving, so it keeps focus; a second press does nothing.
    if (saving) return;
    // A limit the browser cannot read reads '' (unlimited): refused at its field instead.
    const unread = unreadNumbers(fields, { clicksLimit: { optional: true } });
    if (unread) return setError(unread);
    setSaving(true);
    setError(undefined);
    try {
      const fields = fieldsOf(draft);
      let saved: Link;
      if (link) {
        const before = fieldsOf(draftOf(link, campaignId));
        const changes: Record<string, unknown> = {};
        for (const [name, value] of Object.entries(fields)) if (JSON.stringify(value) !== JSON.stringify(before[name as keyof typeof before])) changes[name] = value;
        if (draft.removePassword) changes.password = null;
        else if (draft.password) changes.password = draft.password;
        if (Object.keys(changes).length === 0) return navigate(href(`links/${link.id}`));
        saved = (await unwrap(api.PATCH('/links/{id}', { params: { path: { id: link.id } }, body: changes as LinkUpdate }))).data;
        // The links' tags make the tag list: a tag new to the workspace, one whose last link let go of it, the counts.
        if ('tags' in changes) invalidateList('tags');
        announce(`Link ${linkName(saved)} saved`);
      } else {
        const body: LinkCreate = { ...fields, ...(draft.campaignId ? {} : { campaignId: undefined }), ...(draft.shortCode.trim() ? { shortCode: draft.shortCode.trim() } : {}), ...(draft.domainId ? { domainId: draft.domainId } : {}), ...(draft.password ? { password: draft.password } : {}) } as LinkCreate;
        saved = (await unwrap(api.POST('/links', { body }))).data;
        if (fields.tags.length > 0) invalidateList('tags');
        // This form lists the verified domains afresh; the kept list may predate one verified elsewhere since.
        if (saved.domainId) invalidateList('domains');
        announce(`Link ${linkName(saved)} created`);
      }
      navigate(href(`links/${saved.id}`));
    } catch (err) {
      if (err instanceof ApiFailure) setError(err);
      else throw err;
    } finally {
      setSaving(false);
    }
  }

  return (
    <>
      <header class="view-header">
        <h1>{link ? `Edit ${linkName(link)}` : 'Create link'}</h1>
      </header>
      <form class="link-form" onSubmit={submit} noValidate>
        <ErrorSummary error={error} problems={problems} />
        <fieldset>
          <legend>Where it goes</legend>
          {text('destinationUrl', 'Destination URL', { type: 'url', required: true, placeholder: 'https://example.com/page' })}
          {text('defaultDestination', 'Default destination', { type: 'url', help: 'Where visitors go when no rule matches; empty: the destination URL.' })}
          {!link && text('shortCode', 'Short code', { help: '3 to 64 letters, digits, - and _; empty: generated.' })}
          {!link && (
            <div class="field">
              <label for="f-domainId">Domain</label>
              <select id="f-domainId" value={draft.domainId} {...invalid('domainId')} onChange={(e) => set('domainId', e.currentTarget.value)}>
                <option value="">Default redirect domain</option>
                {domains.data?.data.map((d) => (
                  <option key={d.id} value={d.id}>
                    {d.hostname}
                  </option>
                ))}
              </select>
              {fieldError('domainId')}
            </div>
          )}
          <div class="field">
            <label for="f-redirectBehavior">Redirect behaviour</label>
            <select id="f-redirectBehavior" value={draft.redirectBehavior} {...invalid('redirectBehavior')} onChange={(e) => set('redirectBehavior', e.currentTarget.value as Behavior)}>
              <option value="auto">auto: rules, else the default destination</option>
              <option value="always">always: always redirect, also when expired</option>
              <option value="rule_only">rule_only: redirect only when a rule matches</option>
              <option value="never">never: record the click, do not redirect</option>
            </select>
            {fieldError('redirectBehavior')}
          </div>
          <div class="field">
            <label for="f-forwardQuery">Visitor’s query string</label>
            <select id="f-forwardQuery" value={draft.forwardQuery} {...invalid('forwardQuery', 'f-forwardQuery-help')} onChange={(e) => set('forwardQuery', e.currentTarget.value)}>
              {forwardQueryOptions.map(([value, , label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
            {fieldError('forwardQuery')}
            <small id="f-forwardQuery-help" class="help">
              What a redirect does with parameters on the short URL (…/code?utm_source=x). The destination’s own parameters win unless utm_* are set to be replaced.
            </small>
          </div>
        </fieldset>
        <fieldset>
          <legend>Description</legend>
          {text('title', labels.title!)}
          <div class="field">
            <label for="f-description">Description</label>
            <textarea id="f-description" value={draft.description} rows={2} {...invalid('description')} onInput={(e) => set('description', e.currentTarget.value)} />
            {fieldError('description')}
          </div>
          <div class="field">
            <label for="f-campaignId">Campaign</label>
            <select id="f-campaignId" value={draft.campaignId} {...invalid('campaignId')} onChange={(e) => set('campaignId', e.currentTarget.value)}>
              {!link && <option value="">Default campaign</option>}
              {campaigns?.map((c) => (
                <option key={c.id} value={c.id}>
                  {c.name}
                </option>
              ))}
            </select>
            <ListFailure what="Campaigns" error={campaignsError} onRetry={reloadCampaigns} />
            {fieldError('campaignId')}
          </div>
          <TagInput
            id="f-tags"
            tags={draft.tags}
            onChange={(tags) => set('tags', tags)}
            pending={draft.tagText}
            onPending={(text) => set('tagText', text)}
            suggestions={knownTags.data?.map((t) => t.name) ?? []}
            invalid={invalid('tags')}
          />
          {/* Tags are typed freely: without the list the field still works, but offers none of the workspace's (and would read as a workspace without tags). */}
          <ListFailure what="Tag suggestions" error={knownTags.error} onRetry={knownTags.reload} />
          {fieldError('tags')}
          {check('enabled', 'Enabled (disabled links answer 404)')}
        </fieldset>
        <fieldset>
          <legend>Limits</legend>
          {text('expiresAt', 'Expires at', { type: 'datetime-local', help: 'In your browser’s time zone; empty: never.' })}
          {text('expiredUrl', 'After expiry, redirect to', { type: 'url', help: 'Empty: expired links answer 410.' })}
          {text('clicksLimit', 'Clicks limit', { type: 'number', help: 'Empty: unlimited.' })}
          {text('password', link?.password ? 'New password (a password is set)' : 'Password', { type: 'password', help: 'Visitors must enter it; at least 4 characters.' })}
          {link?.password && check('removePassword', 'Remove the password')}
        </fieldset>
        <fieldset>
          <legend>Deep links</legend>
          {check('deepLinkEnabled', 'Open the app on iOS and Android')}
          {text('deepLinkIos', 'iOS URL scheme', { placeholder: 'myapp://path' })}
          {text('deepLinkAndroid', 'Android intent', { placeholder: 'intent://path#Intent;scheme=myapp;package=com.example;end' })}
          {text('deepLinkFallbackUrl', 'Fallback URL', { type: 'url' })}
        </fieldset>
        <fieldset>
          <legend>Conversion tracking</legend>
          {check('conversionTracking', 'Append clickId to the destination')}
          <div class="field">
            <label for="f-trackingType">Tracking type</label>
            <select id="f-trackingType" value={draft.trackingType} {...invalid('trackingType')} onChange={(e) => set('trackingType', e.currentTarget.value as Tracking)}>
              <option value="pixel">pixel: a 1×1 image on your page</option>
              <option value="s2s">s2s: your server posts to /conversions/s2s</option>
            </select>
            {fieldError('trackingType')}
          </div>
        </fieldset>
        <div class="actions">
          <a class="button" href={link ? href(`links/${link.id}`) : href('links')}>
            Cancel
          </a>
          <button type="submit" class="primary" aria-disabled={saving ? 'true' : undefined}>
            {saving ? 'Saving…' : link ? 'Save changes' : 'Create link'}
          </button>
        </div>
      </form>
    </>
  );
}
