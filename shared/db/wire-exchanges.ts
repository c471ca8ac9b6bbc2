/**
 * How many of a Postgres connection's exchanges are still unanswered, read off the
 * plaintext wire protocol as it passes (answer-watch.ts): each Sync or simple Query the
 * client sends, and its startup message, is answered by exactly one ReadyForQuery ('Z')
 * once the server has sent everything it had for it. Byte counts cannot tell a connection
 * that heard its last answer from one that heard the first of two pipelined answers and
 * then nothing; this can.
 *
 * A Flush (no Sync after it) asks for the answers so far without a ReadyForQuery:
 * postgres.js sends Parse, Describe, Flush for a statement's first run on a connection
 * (its parameter types come back before it is bound and run), and Execute, Flush for a
 * cursor's rows. It is one more exchange, answered by the message that ends what it
 * flushed (a description: RowDescription or NoData; rows: CommandComplete,
 * PortalSuspended or EmptyQueryResponse; an ErrorResponse) once the exchanges sent
 * before it are answered.
 *
 * Each ReadyForQuery also says whether the connection is inside a transaction: `idle`
 * is a connection with nothing unanswered, outside one.
 *
 * A connection that asks for TLS (SSLRequest) or sends a CancelRequest becomes opaque
 * (`opaque`: its messages can no longer be read here). Over TLS the caller reads the TLS
 * socket's clear side with a new instance, from its startup message on; else it falls
 * back to bytes. A server that refuses TLS ('N') leaves the connection in the clear, and
 * readable again.
 */
const SSL_REQUEST_CODE = 80877103;
const CANCEL_REQUEST_CODE = 80877102;
const GSSENC_REQUEST_CODE = 80877104;
const SYNC = 0x53; // 'S'
const QUERY = 0x51; // 'Q'
const READY_FOR_QUERY = 0x5a; // 'Z'
const FLUSH = 0x48; // 'H'
/** The server's answer to an SSLRequest that refuses it. */
const SSL_REFUSED = 0x4e; // 'N'
/** ReadyForQuery's transaction status: idle, outside a transaction. */
const NOT_IN_TRANSACTION = 0x49; // 'I'
/** The server's messages that end what a Flush asked for: RowDescription, NoData, CommandComplete, PortalSuspended, EmptyQueryResponse, ErrorResponse. */
const FLUSH_ANSWERS = new Set([0x54, 0x6e, 0x43, 0x73, 0x49, 0x45]); // 'T' 'n' 'C' 's' 'I' 'E'

/**
 * Splits one direction of the protocol into messages, fed in chunks of any size: a
 * type byte and a 4-byte length that counts itself and the body; in the client's
 * direction the first message has no type byte.
 */
class MessageSplitter {
  /** The header being read: [type,] length. */
  private readonly header = Buffer.alloc(8);
  private headerFill = 0;
  /** Body bytes of the current message still to pass. */
  private bodyLeft = 0;
  private untyped: boolean;
  /** The current message's type, and whether its first body byte has passed. */
  private type: number | null = null;
  private bodyStarted = false;
  private readonly onMessage: (type: number | null, code: number | null) => void;
  private readonly onFirstBodyByte: (type: number, byte: number) => void;

  /**
   * `untyped`: the first message has no type byte; its code (bytes 4-8) is read with its
   * length. `onMessage` is called once a message's header has passed, `onFirstBodyByte`
   * once the first byte of a typed message's body has (it may come in a later chunk).
   */
  constructor(untyped: boolean, onMessage: (type: number | null, code: number | null) => void, onFirstBodyByte: (type: number, byte: number) => void = () => undefined) {
    this.untyped = untyped;
    this.onMessage = onMessage;
    this.onFirstBodyByte = onFirstBodyByte;
  }

  /** The next message has no type byte (a startup message after a refused SSLRequest). */
  expectUntyped(): void {
    this.untyped = true;
  }

  feed(chunk: Uint8Array): void {
    let i = 0;
    while (i < chunk.length) {
      if (this.bodyLeft > 0) {
        if (!this.bodyStarted && this.type !== null) this.onFirstBodyByte(this.type, chunk[i]!);
        this.bodyStarted = true;
        const n = Math.min(this.bodyLeft, chunk.length - i);
        this.bodyLeft -= n;
        i += n;
        continue;
      }
      // An untyped first message: its length, then its code (protocol version or request code).
      const headerSize = this.untyped ? 8 : 5;
      const n = Math.min(headerSize - this.headerFill, chunk.length - i);
      this.header.set(chunk.subarray(i, i + n), this.headerFill);
      this.headerFill += n;
      i += n;
      if (this.headerFill < headerSize) continue;
      this.headerFill = 0;
      if (this.untyped) {
        const length = this.header.readInt32BE(0);
        this.untyped = false;
        this.bodyLeft = Math.max(0, length - 8);
        this.type = null;
        this.onMessage(null, this.header.readInt32BE(4));
      } else {
        const length = this.header.readInt32BE(1);
        this.bodyLeft = Math.max(0, length - 4);
        this.type = this.header[0]!;
        this.bodyStarted = false;
        this.onMessage(this.type, null);
      }
    }
  }
}

export class WireExchanges {
  private asked = 0;
  private answered = 0;
  private isOpaque = false;
  /** A Flush sent and its answer not ended; it follows the answers to the first `flushAfter` exchanges. */
  private flushed = false;
  private flushAfter = 0;
  /** An SSLRequest was sent and its one-byte answer has not come: 'S' (TLS follows) or 'N' (the clear goes on). */
  private sslAnswerDue = false;
  /** The last ReadyForQuery's transaction status; null until it has come (none yet, or its byte is still on the way). */
  private status: number | null = null;
  private readonly sent = new MessageSplitter(true, (type, code) => {
    if (type === null) {
      if (code === SSL_REQUEST_CODE) {
        this.isOpaque = true;
        this.sslAnswerDue = true;
      } else if (code === CANCEL_REQUEST_CODE || code === GSSENC_REQUEST_CODE) this.isOpaque = true;
      else this.asked++; // the startup message: answered once authentication is done
    } else if (type === SYNC || type === QUERY) this.asked++;
    else if (type === FLUSH) {
      this.flushed = true;
      this.flushAfter = this.asked;
    }
  });
  private readonly received = new MessageSplitter(
    false,
    (type) => {
      if (type === READY_FOR_QUERY) {
        this.answered++;
        this.status = null;
      }
      // A Sync sent after the Flush ends its wait too: what it flushed is answered before that ReadyForQuery.
      if (this.flushed && (this.answered > this.flushAfter || (this.answered === this.flushAfter && type !== null && FLUSH_ANSWERS.has(type)))) this.flushed = false;
    },
    (type, byte) => {
      if (type === READY_FOR_QUERY) this.status = byte;
    },
  );

  /** Bytes the client wrote. */
  sentBytes(chunk: Uint8Array): void {
    if (!this.isOpaque) this.sent.feed(chunk);
  }

  /** Bytes the server sent. */
  receivedBytes(chunk: Uint8Array): void {
    if (this.sslAnswerDue && chunk.length > 0) {
      // Refused ('N', as `sslmode=prefer` takes it from a server without TLS), the connection
      // goes on in the clear with its startup message: readable again.
      this.sslAnswerDue = false;
      if (chunk[0] !== SSL_REFUSED) return;
      this.isOpaque = false;
      this.sent.expectUntyped();
      chunk = chunk.subarray(1);
    }
    if (!this.isOpaque) this.received.feed(chunk);
  }

  /** Its messages cannot be read (TLS, a cancel request): count nothing. */
  get opaque(): boolean {
    return this.isOpaque;
  }

  /**
   * Nothing sent is unanswered, and the last answer left the connection outside a
   * transaction: closing it now fails nothing sent, and leaves no transaction half done.
   * False while opaque.
   */
  get idle(): boolean {
    return !this.isOpaque && this.unanswered <= 0 && this.status === NOT_IN_TRANSACTION;
  }

  /** Exchanges sent whose ReadyForQuery (or a Flush's answer) has not come back. */
  get unanswered(): number {
    return this.asked - this.answered + (this.flushed ? 1 : 0);
  }
}
