import { describe, expect, it } from 'vitest';
import { conditionSchemas, isRuleType, isValidTimeZone, parseConditions, ruleTypes } from './rule-conditions.ts';
import type { RuleType } from './rule-conditions.ts';

const validTime = { timezone: 'Europe/Berlin', days: ['monday'], startTime: '09:00', endTime: '17:00' };

describe('parseConditions: valid input', () => {
  const cases: Array<[RuleType, unknown, unknown]> = [
    ['geo', { countries: ['US', 'GB'], operator: 'in' }, { countries: ['US', 'GB'], operator: 'in' }],
    ['geo', { countries: ['us', 'gb'] }, { countries: ['US', 'GB'], operator: 'in' }],
    ['geo', { countries: ['de'], operator: 'not_in' }, { countries: ['DE'], operator: 'not_in' }],
    ['device', { devices: ['mobile', 'tablet'] }, { devices: ['mobile', 'tablet'] }],
    ['device', { os: ['ios'] }, { os: ['ios'] }],
    ['device', { devices: ['desktop'], os: ['macos', 'linux'] }, { devices: ['desktop'], os: ['macos', 'linux'] }],
    ['time', validTime, validTime],
    ['time', { ...validTime, startTime: '22:00', endTime: '02:00' }, { ...validTime, startTime: '22:00', endTime: '02:00' }],
    ['time', { ...validTime, startTime: '00:00', endTime: '23:59' }, { ...validTime, startTime: '00:00', endTime: '23:59' }],
    ['time', { ...validTime, timezone: 'UTC' }, { ...validTime, timezone: 'UTC' }],
    ['percentage', { percentage: 0 }, { percentage: 0 }],
    ['percentage', { percentage: 100 }, { percentage: 100 }],
    ['percentage', { percentage: 33.33 }, { percentage: 33.33 }],
  ];
  it.each(cases)('%s %j', (type, input, expected) => {
    const result = parseConditions(type, input);
    expect(result.success).toBe(true);
    expect(result.data).toEqual(expected);
  });
});

describe('parseConditions: invalid input', () => {
  const cases: Array<[string, RuleType, unknown, string]> = [
    ['unknown country XX', 'geo', { countries: ['XX'] }, 'countries.0'],
    ['alpha-3 USA', 'geo', { countries: ['USA'] }, 'countries.0'],
    ['numeric code', 'geo', { countries: ['840'] }, 'countries.0'],
    ['UK is not ISO', 'geo', { countries: ['UK'] }, 'countries.0'],
    ['empty country list', 'geo', { countries: [] }, 'countries'],
    ['missing countries', 'geo', { operator: 'in' }, 'countries'],
    ['bad operator', 'geo', { countries: ['US'], operator: 'eq' }, 'operator'],
    ['unknown key in geo', 'geo', { countries: ['US'], region: 'CA' }, ''],
    ['device with neither list', 'device', {}, ''],
    ['empty devices list', 'device', { devices: [] }, 'devices'],
    ['empty os list', 'device', { os: [] }, 'os'],
    ['unknown device', 'device', { devices: ['phone'] }, 'devices.0'],
    ['unknown os', 'device', { os: ['blackberry'] }, 'os.0'],
    ['unknown key in device', 'device', { devices: ['mobile'], browser: ['chrome'] }, ''],
    ['bad weekday', 'time', { ...validTime, days: ['funday'] }, 'days.0'],
    ['capitalised weekday', 'time', { ...validTime, days: ['Monday'] }, 'days.0'],
    ['empty days', 'time', { ...validTime, days: [] }, 'days'],
    ['repeated day', 'time', { ...validTime, days: ['monday', 'monday'] }, 'days'],
    ['24:00 as a start', 'time', { ...validTime, startTime: '24:00' }, 'startTime'],
    ['9:00 (one-digit hour)', 'time', { ...validTime, startTime: '9:00' }, 'startTime'],
    ['09:60', 'time', { ...validTime, startTime: '09:60' }, 'startTime'],
    ['seconds', 'time', { ...validTime, startTime: '09:00:00' }, 'startTime'],
    ['bad timezone', 'time', { ...validTime, timezone: 'Mars/Base' }, 'timezone'],
    ['empty timezone', 'time', { ...validTime, timezone: '' }, 'timezone'],
    ['start equals end', 'time', { ...validTime, startTime: '10:00', endTime: '10:00' }, 'endTime'],
    ['unknown key in time', 'time', { ...validTime, until: '2026-01-01' }, ''],
    ['percentage 101', 'percentage', { percentage: 101 }, 'percentage'],
    ['percentage -1', 'percentage', { percentage: -1 }, 'percentage'],
    ['percentage as string', 'percentage', { percentage: '50' }, 'percentage'],
    ['percentage NaN', 'percentage', { percentage: Number.NaN }, 'percentage'],
    ['unknown key in percentage', 'percentage', { percentage: 5, sticky: true }, ''],
    ['not an object', 'percentage', 50, ''],
  ];
  it.each(cases)('%s', (_name, type, input, path) => {
    const result = parseConditions(type, input);
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => issue.path.join('.'))).toContain(path);
  });

  it('takes 24:00 as an end (the end of the day), never as a start', () => {
    expect(parseConditions('time', { ...validTime, startTime: '00:00', endTime: '24:00' }).success).toBe(true);
    const start = parseConditions('time', { ...validTime, startTime: '24:00', endTime: '10:00' });
    expect(start.error?.issues.map((issue) => issue.path.join('.'))).toEqual(['startTime']);
    for (const endTime of ['24:01', '24:30', '25:00']) {
      const end = parseConditions('time', { ...validTime, startTime: '00:00', endTime });
      expect(end.error?.issues.map((issue) => issue.path.join('.')), endTime).toEqual(['endTime']);
    }
  });

  it('says why start == end is refused', () => {
    const result = parseConditions('time', { ...validTime, startTime: '10:00', endTime: '10:00' });
    expect(result.error?.issues[0]?.message).toMatch(/startTime and endTime must differ/);
  });
});

describe('registry', () => {
  it('has one schema per rule type', () => {
    expect(Object.keys(conditionSchemas).sort()).toEqual([...ruleTypes].sort());
  });

  it('recognises rule types', () => {
    expect(isRuleType('geo')).toBe(true);
    expect(isRuleType('referrer')).toBe(false);
    expect(isRuleType('toString')).toBe(false);
  });

  it('validates IANA zones through Intl', () => {
    expect(isValidTimeZone('America/New_York')).toBe(true);
    expect(isValidTimeZone('America/New_York')).toBe(true); // cached path
    expect(isValidTimeZone('Mars/Base')).toBe(false);
  });
});
