import type { Context } from 'koa';
import type { Pagination } from '../../shared/schemas/common.ts';

export function ok(ctx: Context, data: unknown, status = 200): void {
  ctx.status = status;
  ctx.body = { success: true, data };
}

export function created(ctx: Context, data: unknown): void {
  ok(ctx, data, 201);
}

export function okList(ctx: Context, data: unknown[], pagination: Pagination): void {
  ctx.status = 200;
  ctx.body = { success: true, data, pagination };
}
