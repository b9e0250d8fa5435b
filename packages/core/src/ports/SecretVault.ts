/**
 * Port: encryption at rest of secrets users give the server that it must later use in the clear (an identity
 * provider's client secret). The Node adapter (NodeSecretVault) is AES-256-GCM under keys from CONVENE_SECRETS_KEY,
 * each ciphertext carrying the id of the key that sealed it, so that old keys still open what they sealed after the
 * operator adds a new one. Without a configured key the vault is unavailable: sealing fails with a message naming
 * the variable, and the features that need it are refused (nothing is ever stored in the clear).
 */
import { Context, type Effect, Schema } from "effect"

/** No key is configured (the message names CONVENE_SECRETS_KEY and says how to make one). */
export class SecretVaultUnavailable extends Schema.TaggedError<SecretVaultUnavailable>()("SecretVaultUnavailable", {
  message: Schema.String
}) {}

/** The ciphertext does not open: sealed by a key no longer configured, or changed. */
export class SecretUnreadable extends Schema.TaggedError<SecretUnreadable>()("SecretUnreadable", {
  message: Schema.String
}) {}

export class SecretVault extends Context.Tag("@convene/core/SecretVault")<SecretVault, {
  /** Whether a key is configured (seal and open can work). */
  readonly available: boolean
  /** The plaintext encrypted under the current key; the result names that key. */
  readonly seal: (plaintext: string) => Effect.Effect<string, SecretVaultUnavailable>
  /** The plaintext of a sealed value, under whichever configured key sealed it. */
  readonly open: (sealed: string) => Effect.Effect<string, SecretVaultUnavailable | SecretUnreadable>
  /** Whether `sealed` was sealed by a key other than the current one (worth sealing again). */
  readonly isStale: (sealed: string) => boolean
}>() {}
