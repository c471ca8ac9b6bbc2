import { hashPassword, verifyPassword } from '../../shared/auth/password-hash.ts';

/**
 * The scrypt work of one request's link passwords, done once per distinct password
 * (and once per distinct stored hash a password is checked against), and bounded.
 *
 * A hash is ~40 ms of CPU on libuv's thread pool (shared/auth/password-hash.ts), which
 * DNS lookups and zlib use too. A bulk request counts once against the rate limit, and
 * with a password per item made every API request wait behind 1,000 hashes (56 s for one
 * bulk create under a fuzz run, the others' requests unanswered meanwhile; 40 s for a bulk
 * PATCH setting one password on 1,000 links, which hashed it 1,000 times).
 *
 * One distinct password takes one hash for all its items (links created or changed
 * together share it, salt and all: they share the password anyway). A request may hash
 * MAX_PASSWORDS distinct passwords (an item past that is refused: `null`) and check
 * MAX_PASSWORD_CHECKS stored hashes (past that a check is not made: `null`, and its
 * caller hashes the password anew). At most ~8 s of scrypt, ~2 s on the pool's 4 threads.
 */
export const MAX_PASSWORDS = 100;
export const MAX_PASSWORD_CHECKS = 100;

export class RequestPasswords {
  readonly #hashes = new Map<string, Promise<string>>();
  readonly #checks = new Map<string, Promise<boolean>>();

  /** A hash of `password`, or null when the request has hashed MAX_PASSWORDS others. */
  hash(password: string): Promise<string> | null {
    let hash = this.#hashes.get(password);
    if (hash === undefined) {
      if (this.#hashes.size === MAX_PASSWORDS) return null;
      hash = hashPassword(password);
      this.#hashes.set(password, hash);
    }
    return hash;
  }

  /** Whether `stored` is a hash of `password`, or null (not known) when the request has made its share of checks. */
  matches(password: string, stored: string): Promise<boolean> | null {
    const key = `${stored}\n${password}`;
    let check = this.#checks.get(key);
    if (check === undefined) {
      if (this.#checks.size === MAX_PASSWORD_CHECKS) return null;
      check = verifyPassword(password, stored);
      this.#checks.set(key, check);
    }
    return check;
  }
}
