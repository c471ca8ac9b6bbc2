import { describe, expect, it } from 'vitest';
import { WireExchanges } from './wire-exchanges.ts';

/** A typed protocol message: type byte, length (counting itself), body. */
const message = (type: string, body = Buffer.alloc(0)) => {
  const header = Buffer.alloc(5);
  header.write(type, 0, 'latin1');
  header.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([header, body]);
};
/** An untyped first message: length, code, body. */
const first = (code: number, body = Buffer.alloc(0)) => {
  const header = Buffer.alloc(8);
  header.writeInt32BE(body.length + 8, 0);
  header.writeInt32BE(code, 4);
  return Buffer.concat([header, body]);
};
const startup = first(196608, Buffer.from('user\0postgres\0\0'));
const ready = message('Z', Buffer.from('I'));
/** Feeds `bytes` in pieces of `size` bytes. */
const inPieces = (bytes: Buffer, size: number, feed: (b: Buffer) => void) => {
  for (let i = 0; i < bytes.length; i += size) feed(bytes.subarray(i, i + size));
};

describe('WireExchanges', () => {
  it('counts the startup and each Sync or Query until its ReadyForQuery, however the bytes are cut', () => {
    for (const size of [1, 2, 3, 7, 1_000]) {
      const x = new WireExchanges();
      inPieces(startup, size, (b) => x.sentBytes(b));
      expect(x.unanswered).toBe(1);
      inPieces(Buffer.concat([message('R', Buffer.alloc(4)), message('S', Buffer.from('a\0b\0')), message('K', Buffer.alloc(8)), ready]), size, (b) => x.receivedBytes(b));
      expect(x.unanswered).toBe(0);
      // Two pipelined statements (Parse, Bind, Describe, Execute, Sync each) and a simple query.
      const extended = Buffer.concat([message('P', Buffer.from('\0SELECT 1\0\0\0')), message('B', Buffer.alloc(10)), message('D', Buffer.from('P\0')), message('E', Buffer.alloc(5)), message('S')]);
      inPieces(Buffer.concat([extended, extended, message('Q', Buffer.from('SELECT 2\0'))]), size, (b) => x.sentBytes(b));
      expect(x.unanswered).toBe(3);
      // The first answered: its rows (a long DataRow included), then ReadyForQuery.
      inPieces(Buffer.concat([message('1'), message('2'), message('D', Buffer.alloc(70_000)), message('C', Buffer.from('SELECT 1\0')), ready]), size, (b) => x.receivedBytes(b));
      expect(x.unanswered, `pieces of ${size}`).toBe(2);
      inPieces(Buffer.concat([message('A', Buffer.alloc(12)), ready, ready]), size, (b) => x.receivedBytes(b));
      expect(x.unanswered).toBe(0);
      expect(x.opaque).toBe(false);
    }
  });

  it("counts a Flush until what it flushed is answered: a statement's description, a cursor's rows, an error", () => {
    const x = new WireExchanges();
    x.sentBytes(startup);
    x.receivedBytes(ready);
    // A statement's first run: Parse, Describe, Flush; the description comes back in two messages.
    x.sentBytes(Buffer.concat([message('P', Buffer.from('\0SELECT $1\0\0\0')), message('D', Buffer.from('S\0')), message('H')]));
    expect(x.unanswered).toBe(1);
    x.receivedBytes(Buffer.concat([message('1'), message('t', Buffer.alloc(6))]));
    expect(x.unanswered, 'parameter types alone: the description goes on').toBe(1);
    x.receivedBytes(message('T', Buffer.alloc(20)));
    expect(x.unanswered).toBe(0);
    // Then bound and run with a Sync, behind which a cursor's Execute, Flush is pipelined.
    x.sentBytes(Buffer.concat([message('B', Buffer.alloc(10)), message('E', Buffer.alloc(5)), message('S'), message('E', Buffer.alloc(5)), message('H')]));
    expect(x.unanswered).toBe(2);
    // The first statement's CommandComplete answers the statement's run, not the Flush behind it.
    x.receivedBytes(Buffer.concat([message('2'), message('C', Buffer.from('SELECT 1\0'))]));
    expect(x.unanswered).toBe(2);
    x.receivedBytes(ready);
    expect(x.unanswered).toBe(1);
    x.receivedBytes(Buffer.concat([message('D', Buffer.alloc(30)), message('s')]));
    expect(x.unanswered, 'rows up to the cursor batch').toBe(0);
    // A description refused (an ErrorResponse) ends the Flush; the Sync sent after it is answered by its ReadyForQuery.
    x.sentBytes(Buffer.concat([message('P', Buffer.from('\0SELEC\0\0\0')), message('D', Buffer.from('S\0')), message('H')]));
    x.receivedBytes(message('E', Buffer.from('Serror\0\0')));
    expect(x.unanswered).toBe(0);
    x.sentBytes(message('S'));
    expect(x.unanswered).toBe(1);
    x.receivedBytes(ready);
    expect(x.unanswered).toBe(0);
  });

  it('is opaque once TLS is asked for, and for a cancel request; readable again when the server refuses TLS', () => {
    const tls = new WireExchanges();
    tls.sentBytes(first(80877103));
    tls.receivedBytes(Buffer.from('S'));
    tls.sentBytes(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01]));
    expect(tls.opaque).toBe(true);
    expect(tls.unanswered).toBe(0);
    expect(tls.idle, 'its transaction state cannot be read').toBe(false);
    const refused = new WireExchanges();
    refused.sentBytes(first(80877103));
    expect(refused.opaque, 'until the server answers').toBe(true);
    refused.receivedBytes(Buffer.from('N'));
    expect(refused.opaque, 'refused: the clear goes on').toBe(false);
    refused.sentBytes(startup);
    expect(refused.unanswered).toBe(1);
    refused.receivedBytes(Buffer.concat([message('R', Buffer.alloc(4)), ready]));
    expect(refused.unanswered).toBe(0);
    expect(refused.idle).toBe(true);
    const cancel = new WireExchanges();
    cancel.sentBytes(first(80877102, Buffer.alloc(8)));
    expect(cancel.opaque).toBe(true);
  });

  it('is idle with nothing unanswered outside a transaction, as each ReadyForQuery says, however the bytes are cut', () => {
    const inTransaction = message('Z', Buffer.from('T'));
    const failedTransaction = message('Z', Buffer.from('E'));
    const query = (text: string) => message('Q', Buffer.from(`${text}\0`));
    for (const size of [1, 5, 1_000]) {
      const x = new WireExchanges();
      const receive = (b: Buffer) => inPieces(b, size, (p) => x.receivedBytes(p));
      x.sentBytes(startup);
      expect(x.idle, 'connecting').toBe(false);
      receive(Buffer.concat([message('R', Buffer.alloc(4)), ready]));
      expect(x.idle).toBe(true);
      x.sentBytes(query('BEGIN'));
      expect(x.idle, 'a statement unanswered').toBe(false);
      receive(Buffer.concat([message('C', Buffer.from('BEGIN\0')), inTransaction]));
      expect(x.idle, 'inside a transaction').toBe(false);
      x.sentBytes(query('SELEC'));
      receive(Buffer.concat([message('E', Buffer.from('Serror\0\0')), failedTransaction]));
      expect(x.idle, 'inside a failed transaction').toBe(false);
      x.sentBytes(query('ROLLBACK'));
      receive(Buffer.concat([message('C', Buffer.from('ROLLBACK\0')), ready]));
      expect(x.idle, `pieces of ${size}`).toBe(true);
    }
    // A ReadyForQuery whose status byte is still on the way says nothing yet.
    const x = new WireExchanges();
    x.sentBytes(startup);
    x.receivedBytes(ready);
    x.sentBytes(message('Q', Buffer.from('BEGIN\0')));
    x.receivedBytes(inTransaction.subarray(0, 5));
    expect(x.unanswered).toBe(0);
    expect(x.idle).toBe(false);
    x.receivedBytes(inTransaction.subarray(5));
    expect(x.idle).toBe(false);
  });
});
