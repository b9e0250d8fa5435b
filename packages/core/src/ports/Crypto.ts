/**
 * Port: randomness and hashing. Tokens are minted from `randomBytes`, stored only as `sha256` hashes and
 * compared with `timingSafeEqual`. Adapters: @convene/node (node:crypto); tests may use the same.
 */
import { Context, type Effect } from "effect"

export class Crypto extends Context.Tag("@convene/core/Crypto")<Crypto, {
  /** Cryptographically secure random bytes. */
  readonly randomBytes: (size: number) => Effect.Effect<Uint8Array>
  /** A random (version 4) UUID. */
  readonly randomUUID: Effect.Effect<string>
  /** Lower-case hex SHA-256 of the UTF-8 bytes of `input`. */
  readonly sha256: (input: string) => Effect.Effect<string>
  /** Lower-case hex HMAC-SHA256 of `data` keyed by `key` (both UTF-8). */
  readonly hmacSha256: (key: string, data: string | Uint8Array) => Effect.Effect<string>
  /** Compares two strings in time that depends only on their lengths. */
  readonly timingSafeEqual: (a: string, b: string) => boolean
}>() {}

/** Port: password hashing (scrypt in the Node adapter). Hashes are self-describing strings. */
export class PasswordHasher extends Context.Tag("@convene/core/PasswordHasher")<PasswordHasher, {
  readonly hash: (password: string) => Effect.Effect<string>
  readonly verify: (password: string, hash: string) => Effect.Effect<boolean>
}>() {}

