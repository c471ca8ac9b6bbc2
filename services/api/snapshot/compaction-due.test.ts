import { describe, expect, it } from 'vitest';
import { snapshotBlobMetadata } from '../../../shared/snapshot/snapshot-blob.ts';
import { compactionDue } from './compaction-due.ts';

const policy = { afterChanges: 100, maxAgeMs: 60_000 };
const now = 1_000_000_000;
const blob = (revision: number, ageMs: number, generation = 'g1') => ({ name: 'snapshot', size: 1, modifiedAt: now - ageMs, metadata: snapshotBlobMetadata({ revision, generation, entries: 1 }) });
const status = (revision: number, generation = 'g1') => ({ entries: 1, revision, generation });

describe('compactionDue', () => {
  it('never for a bucket never written', () => {
    expect(compactionDue(status(0), null, policy, now)).toBeNull();
  });
  it('at once when there is no usable blob', () => {
    expect(compactionDue(status(5), null, policy, now)).toMatch(/no compacted snapshot/);
    expect(compactionDue(status(5), { ...blob(5, 0), metadata: { format: 'x' } }, policy, now)).toMatch(/unknown format/);
    expect(compactionDue(status(5, 'g2'), blob(5, 0), policy, now)).toMatch(/recreated/);
    expect(compactionDue(status(5), blob(9, 0), policy, now)).toMatch(/recreated/);
  });
  it('after enough changes, whatever its age', () => {
    expect(compactionDue(status(1_099), blob(1_000, 0), policy, now)).toBeNull();
    expect(compactionDue(status(1_100), blob(1_000, 0), policy, now)).toMatch(/100 changes/);
  });
  it('when old, only if anything changed since', () => {
    expect(compactionDue(status(1_000), blob(1_000, 3_600_000), policy, now)).toBeNull();
    expect(compactionDue(status(1_001), blob(1_000, 59_999), policy, now)).toBeNull();
    expect(compactionDue(status(1_001), blob(1_000, 60_000), policy, now)).toMatch(/60 s old/);
  });
});
