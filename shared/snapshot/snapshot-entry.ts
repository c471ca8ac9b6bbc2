import type { CompiledLink } from '../routing/index.ts';

/**
 * A snapshot entry in the KV bucket, keyed by link id: the compiled link, or
 * null once the link no longer resolves (deleted, or its domain gone). Versions
 * come from one Postgres sequence, drawn while the publisher holds the link's
 * outbox row, so a later state always carries a higher version.
 */
export interface SnapshotEntry {
  version: number;
  linkId: string;
  link: CompiledLink | null;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export function encodeSnapshotEntry(entry: SnapshotEntry): Uint8Array {
  return encoder.encode(JSON.stringify(entry));
}

export function decodeSnapshotEntry(data: Uint8Array): SnapshotEntry {
  return JSON.parse(decoder.decode(data)) as SnapshotEntry;
}
