import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure, api, unwrap, type Rule, type RuleCreate } from '../api.ts';
import { isStale } from '../use-load.ts';
import { ErrorSummary, FieldError, invalidProps, problemsOf, unreadNumbers, type FieldMap } from '../components/field-errors.tsx';

type RuleType = Rule['type'];
const devices = ['mobile', 'tablet', 'desktop'] as const;
const systems = ['ios', 'android', 'windows', 'macos', 'linux'] as const;
const days = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;

interface Draft {
  type: RuleType;
  name: string;
  destinationUrl: string;
  priority: string;
  enabled: boolean;
  countries: string;
  operator: 'in' | 'not_in';
  devices: string[];
  os: string[];
  timezone: string;
  days: string[];
  startTime: string;
  endTime: string;
  percentage: string;
}

function draftOf(rule: Rule | undefined): Draft {
  const c = (rule?.conditions ?? {}) as Record<string, unknown>;
  return {
    type: rule?.type ?? 'percentage',
    name: rule?.name ?? '',
    destinationUrl: rule?.destinationUrl ?? '',
    priority: String(rule?.priority ?? 50),
    enabled: rule?.enabled ?? true,
    countries: ((c.countries as string[] | undefined) ?? []).join(', '),
    operator: (c.operator as 'in' | 'not_in' | undefined) ?? 'in',
    devices: (c.devices as string[] | undefined) ?? [],
    os: (c.os as string[] | undefined) ?? [],
    timezone: (c.timezone as string | undefined) ?? Intl.DateTimeFormat().resolvedOptions().timeZone,
    days: (c.days as string[] | undefined) ?? [...days.slice(0, 5)],
    startTime: (c.startTime as string | undefined) ?? '09:00',
    // A time input cannot show 24:00: the editor shows the end of the day as 00:00 (see conditionsOf).
    endTime: c.endTime === '24:00' ? '00:00' : ((c.endTime as string | undefined) ?? '17:00'),
    percentage: c.percentage === undefined ? '50' : String(c.percentage),
  };
}

function conditionsOf(d: Draft): Record<string, unknown> {
  switch (d.type) {
    case 'geo':
      return { countries: d.countries.split(/[\s,]+/).filter(Boolean).map((c) => c.toUpperCase()), operator: d.operator };
    case 'device':
      return { ...(d.devices.length ? { devices: d.devices } : {}), ...(d.os.length ? { os: d.os } : {}) };
    case 'time':
      // Until 00:00 is until midnight; from 00:00 that is the whole day, which the API spells 24:00.
      return { timezone: d.timezone, days: d.days, startTime: d.startTime, endTime: d.startTime === '00:00' && d.endTime === '00:00' ? '24:00' : d.endTime };
    case 'percentage':
      return { percentage: Number(d.percentage) };
  }
}

/** Plain words for a rule's conditions, as a list shows them. */
export function describeConditions(rule: Rule): string {
  const c = rule.conditions as Record<string, unknown>;
  switch (rule.type) {
    case 'geo':
      return `${c.operator === 'not_in' ? 'Visitors outside' : 'Visitors in'} ${(c.countries as string[]).join(', ')}`;
    case 'device':
      return [c.devices && `devices ${(c.devices as string[]).join(', ')}`, c.os && `OS ${(c.os as string[]).join(', ')}`].filter(Boolean).join(' and ') || 'Any device';
    case 'time':
      return `${(c.days as string[]).map((d) => d.slice(0, 3)).join(', ')} ${c.startTime}–${c.endTime} (${c.timezone})`;
    case 'percentage':
      return `${c.percentage} % of visitors`;
  }
}

/** The editor's fields by the API's path, with their visible labels; `idp` prefixes the ids (one editor per rule). */
const fieldsOf = (idp: string): FieldMap => ({
  type: { id: `${idp}-type`, label: 'Type' },
  name: { id: `${idp}-name`, label: 'Name' },
  destinationUrl: { id: `${idp}-destination`, label: 'Destination URL' },
  priority: { id: `${idp}-priority`, label: 'Priority' },
  enabled: { id: `${idp}-enabled`, label: 'Enabled' },
  'conditions.percentage': { id: `${idp}-percentage`, label: 'Share of visitors' },
  'conditions.operator': { id: `${idp}-operator`, label: 'Match' },
  'conditions.countries': { id: `${idp}-countries`, label: 'Countries' },
  'conditions.startTime': { id: `${idp}-start`, label: 'From' },
  'conditions.endTime': { id: `${idp}-end`, label: 'Until' },
  'conditions.timezone': { id: `${idp}-tz`, label: 'Time zone' },
  // Groups of checkboxes: their legend names them; no one box is the field.
  'conditions.days': { id: null, label: 'Days' },
  'conditions.devices': { id: null, label: 'Devices' },
  'conditions.os': { id: null, label: 'Operating systems' },
  conditions: { id: null, label: 'Conditions' },
});

/**
 * Create (with linkId and campaignId) or edit a rule; type is fixed once created. Opening it moves focus to its first field.
 * `onDone(changed)`: closed; `changed` when the list is to be read afresh: the rule was saved, or a save was refused because
 * it was deleted or changed elsewhere (404, 409, 410). The editor stays open on such a refusal, saying so, what was typed still there.
 */
export function RuleEditor(props: { rule?: Rule; linkId: string; campaignId: string; onDone(changed: boolean): void }) {
  const [d, setDraft] = useState(() => draftOf(props.rule));
  const [error, setError] = useState<ApiFailure | undefined>();
  const stale = useRef(false);
  const set = <K extends keyof Draft>(name: K, value: Draft[K]) => setDraft((x) => ({ ...x, [name]: value }));
  const toggleIn = (name: 'devices' | 'os' | 'days', value: string) => set(name, d[name].includes(value) ? d[name].filter((v) => v !== value) : [...d[name], value]);
  const idp = props.rule ? `r-${props.rule.id}` : 'r-new';
  const problems = problemsOf(error, fieldsOf(idp));
  const invalid = (id: string) => invalidProps(problems, `${idp}-${id}`);
  const fieldError = (id: string) => <FieldError problems={problems} id={`${idp}-${id}`} />;
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => {
    form.current?.querySelector<HTMLElement>('input:not(:disabled), select:not(:disabled)')?.focus();
  }, []);

  async function submit(event: Event) {
    event.preventDefault();
    // An emptied share, or one the browser cannot read (`5-`), reads '': Number('') is 0 %, a rule sending no one.
    const unread = unreadNumbers(fieldsOf(idp), { priority: {}, 'conditions.percentage': {} });
    if (unread) return setError(unread);
    setError(undefined);
    const common = { name: d.name, destinationUrl: d.destinationUrl.trim(), priority: Number(d.priority), enabled: d.enabled, conditions: conditionsOf(d) };
    try {
      if (props.rule) await unwrap(api.PATCH('/rules/{id}', { params: { path: { id: props.rule.id } }, body: common }));
      else await unwrap(api.POST('/rules', { body: { ...common, type: d.type, linkId: props.linkId, campaignId: props.campaignId } as RuleCreate }));
      props.onDone(true);
    } catch (err) {
      if (!(err instanceof ApiFailure)) throw err;
      setError(err);
      if (isStale(err)) stale.current = true;
    }
  }

  const checks = (name: 'devices' | 'os' | 'days', values: readonly string[], legend: string) => (
    <fieldset class="inline-checks">
      <legend>{legend}</legend>
      {values.map((v) => (
        <label key={v}>
          <input type="checkbox" checked={d[name].includes(v)} onChange={() => toggleIn(name, v)} /> {v}
        </label>
      ))}
    </fieldset>
  );

  return (
    // noValidate: the API's answer is shown beside each field, in words, where the browser's bubble would vanish.
    <form class="rule-editor card" ref={form} onSubmit={submit} noValidate aria-label={props.rule ? `Edit rule ${props.rule.name || props.rule.id}` : 'New rule'}>
      <ErrorSummary error={error} problems={problems} />
      <div class="grid">
        <div class="field">
          <label for={`${idp}-type`}>Type</label>
          <select id={`${idp}-type`} value={d.type} disabled={!!props.rule} onChange={(e) => set('type', e.currentTarget.value as RuleType)}>
            <option value="percentage">Percentage of visitors (A/B split)</option>
            <option value="geo">Country</option>
            <option value="device">Device and OS</option>
            <option value="time">Days and hours</option>
          </select>
        </div>
        <div class="field">
          <label for={`${idp}-name`}>Name</label>
          <input id={`${idp}-name`} value={d.name} {...invalid('name')} onInput={(e) => set('name', e.currentTarget.value)} placeholder="Variant B" />
          {fieldError('name')}
        </div>
        <div class="field wide">
          <label for={`${idp}-destination`}>Destination URL</label>
          <input id={`${idp}-destination`} type="url" required value={d.destinationUrl} {...invalid('destination')} onInput={(e) => set('destinationUrl', e.currentTarget.value)} placeholder="https://example.com/b" />
          {fieldError('destination')}
        </div>
        <div class="field">
          <label for={`${idp}-priority`}>Priority (1–100, higher first)</label>
          <input id={`${idp}-priority`} type="number" min={1} max={100} value={d.priority} {...invalid('priority')} onInput={(e) => set('priority', e.currentTarget.value)} />
          {fieldError('priority')}
        </div>
        {d.type === 'percentage' && (
          <div class="field">
            <label for={`${idp}-percentage`}>Share of visitors (%)</label>
            <input id={`${idp}-percentage`} type="number" min={0} max={100} step="any" value={d.percentage} {...invalid('percentage')} onInput={(e) => set('percentage', e.currentTarget.value)} />
            {fieldError('percentage')}
          </div>
        )}
        {d.type === 'geo' && (
          <>
            <div class="field">
              <label for={`${idp}-operator`}>Match</label>
              <select id={`${idp}-operator`} value={d.operator} onChange={(e) => set('operator', e.currentTarget.value as 'in' | 'not_in')}>
                <option value="in">Visitors in</option>
                <option value="not_in">Visitors outside</option>
              </select>
            </div>
            <div class="field">
              <label for={`${idp}-countries`}>Countries (ISO codes)</label>
              <input id={`${idp}-countries`} value={d.countries} {...invalid('countries')} onInput={(e) => set('countries', e.currentTarget.value)} placeholder="DE, AT, CH" />
              {fieldError('countries')}
            </div>
          </>
        )}
        {d.type === 'device' && (
          <>
            {checks('devices', devices, 'Devices')}
            {checks('os', systems, 'Operating systems')}
          </>
        )}
        {d.type === 'time' && (
          <>
            {checks('days', days, 'Days')}
            <div class="field">
              <label for={`${idp}-start`}>From</label>
              <input id={`${idp}-start`} type="time" value={d.startTime} {...invalid('start')} onInput={(e) => set('startTime', e.currentTarget.value)} />
              {fieldError('start')}
            </div>
            <div class="field">
              <label for={`${idp}-end`}>Until</label>
              <input id={`${idp}-end`} type="time" value={d.endTime} {...invalid('end')} onInput={(e) => set('endTime', e.currentTarget.value)} />
              {fieldError('end')}
            </div>
            <div class="field">
              <label for={`${idp}-tz`}>Time zone</label>
              <input id={`${idp}-tz`} value={d.timezone} {...invalid('tz')} onInput={(e) => set('timezone', e.currentTarget.value)} />
              {fieldError('tz')}
            </div>
          </>
        )}
        <div class="field check">
          <input id={`${idp}-enabled`} type="checkbox" checked={d.enabled} onChange={(e) => set('enabled', e.currentTarget.checked)} />
          <label for={`${idp}-enabled`}>Enabled</label>
        </div>
      </div>
      <div class="actions">
        <button type="button" onClick={() => props.onDone(stale.current)}>
          Cancel
        </button>
        <button type="submit" class="primary">
          {props.rule ? 'Save rule' : 'Add rule'}
        </button>
      </div>
    </form>
  );
}
