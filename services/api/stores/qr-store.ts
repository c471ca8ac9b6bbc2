import { newId } from '../../../shared/ids.ts';
import { iso } from '../../../shared/db/rows.ts';
import type { Sql } from '../../../shared/db/postgres.ts';
import type { QrCreate, QrErrorCorrection, QrFormat } from '../../../shared/schemas/qr.ts';

export interface QrRecord {
  id: string;
  linkId: string;
  format: QrFormat;
  size: number;
  margin: number;
  foreground: string;
  background: string;
  errorCorrection: QrErrorCorrection;
  encodedUrl: string;
  createdAt: string;
}

type QrRow = Omit<QrRecord, 'createdAt'> & { createdAt: Date };

const present = (row: QrRow): QrRecord => ({ ...row, createdAt: iso(row.createdAt)! });

export function qrStore(sql: Sql) {
  const columns = sql`id, link_id, format, size, margin, foreground, background, error_correction, encoded_url, created_at`;

  return {
    async create(workspaceId: string, input: QrCreate, encodedUrl: string): Promise<QrRecord> {
      const [row] = await sql<QrRow[]>`
        INSERT INTO qr_codes (id, workspace_id, link_id, format, size, margin, foreground, background, error_correction, encoded_url)
        VALUES (${newId('qr')}, ${workspaceId}, ${input.linkId}, ${input.format}, ${input.size}, ${input.margin},
          ${input.foreground}, ${input.background}, ${input.errorCorrection}, ${encodedUrl})
        RETURNING ${columns}`;
      return present(row!);
    },

    async get(workspaceId: string, linkId: string, id: string): Promise<QrRecord | undefined> {
      const [row] = await sql<QrRow[]>`
        SELECT ${columns} FROM qr_codes WHERE id = ${id} AND link_id = ${linkId} AND workspace_id = ${workspaceId}`;
      return row && present(row);
    },

    /** A link's QR records, newest first. */
    async listForLink(workspaceId: string, linkId: string, query: { page: number; limit: number }): Promise<{ items: QrRecord[]; total: number }> {
      const where = sql`WHERE workspace_id = ${workspaceId} AND link_id = ${linkId}`;
      const [count] = await sql<{ total: number }[]>`SELECT count(*)::int AS total FROM qr_codes ${where}`;
      const rows = await sql<QrRow[]>`
        SELECT ${columns} FROM qr_codes ${where} ORDER BY created_at DESC, id DESC
        LIMIT ${query.limit} OFFSET ${(query.page - 1) * query.limit}`;
      return { items: rows.map(present), total: count!.total };
    },
  };
}

export type QrStore = ReturnType<typeof qrStore>;
