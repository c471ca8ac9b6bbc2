/**
 * An infrastructure error with a stable code, as nats.js gives its own: callers handle
 * a condition by its class and code, never by its message. Each subclass names its
 * codes; its `name` is its class name.
 */
export class CodedError<Code extends string> extends Error {
  readonly code: Code;

  constructor(code: Code, message: string) {
    super(message);
    this.name = new.target.name;
    this.code = code;
  }
}
