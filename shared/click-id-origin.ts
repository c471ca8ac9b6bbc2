import { verifyClickId } from './click-id.ts';

/**
 * Whether an event with this id, link and time can have come from a redirector: its id
 * is a click id whose MAC holds under the deployment's secret (shared/click-id.ts) and
 * that was issued for this very link at this very millisecond (redirectors stamp an
 * event with the time its click id encodes). Anyone able to publish on NATS could
 * otherwise store clicks for any link: those are dead-lettered instead.
 */
export type EventOrigin = (id: string, linkId: string, ts: number) => boolean;

export function clickIdOrigin(secret: Buffer): EventOrigin {
  return (id, linkId, ts) => {
    const issued = verifyClickId(secret, id);
    return issued !== null && issued.linkId === linkId && issued.timestamp === ts;
  };
}
