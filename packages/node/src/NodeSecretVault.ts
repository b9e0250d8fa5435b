/**
 * node:crypto behind the core's SecretVault port: AES-256-GCM under the keys of CONVENE_SECRETS_KEY, with rotation.
 *
 * The variable holds one key or a comma list of keys, each 32 random bytes in base64 (or base64url), optionally
 * named: `<kid>:<base64>` with kid 1 to 32 letters, digits, `_` or `-`. An unnamed key's id is derived from it (the
 * first 8 base64url characters of its SHA-256, which reveals nothing usable about the key). The FIRST key seals;
 * every key opens what it sealed. To rotate, put a new key first and keep the old ones after it.
 *
 * A sealed value is `v1.<kid>.<iv>.<ciphertext>.<tag>`: a random 12-byte IV per seal and a 16-byte tag, each in
 * base64url. The version and key id are bound to the ciphertext as additional authenticated data, so that a value
 * whose header is changed does not open either.
 */
import { SecretUnreadable, SecretVault, SecretVaultUnavailable } from "@convene/core"
import { Effect, Either, Layer, Option, Redacted } from "effect"
import * as NodeCrypto from "node:crypto"

const cipher = "aes-256-gcm"
const keyLength = 32
const ivLength = 12
const tagLength = 16
const version = "v1"

/** The environment variable the keys come from. */
export const variable = "CONVENE_SECRETS_KEY"

/** One key of the vault, with its id. */
export interface VaultKey {
  readonly kid: string
  readonly key: Redacted.Redacted<Uint8Array>
}

const kidPattern = /^[A-Za-z0-9_-]{1,32}$/
const base64Pattern = /^(?:[A-Za-z0-9+/]+={0,2}|[A-Za-z0-9_-]+)$/
const expected = "a key is 32 random bytes in base64 (for example the output of `openssl rand -base64 32`), optionally " +
  "named as <id>:<base64> with an id of 1 to 32 letters, digits, _ or -; several keys are separated by commas, the " +
  "first one sealing"

/** The id of an unnamed key: 8 base64url characters of its SHA-256. */
const derivedKid = (key: Uint8Array): string => NodeCrypto.createHash("sha256").update(key).digest("base64url").slice(0, 8)

/**
 * The keys of the variable's text, first the sealing one. The error names the variable and the position of the
 * entry at fault, never its text (which may be a key).
 */
export const parseKeys = (text: string): Either.Either<ReadonlyArray<VaultKey>, string> => {
  const entries = text.split(",").map((entry) => entry.trim())
  if (entries.every((entry) => entry.length === 0)) return Either.left(`${variable} is empty; ${expected}`)
  const keys: Array<VaultKey> = []
  for (const [index, entry] of entries.entries()) {
    const where = entries.length === 1 ? "the key" : `key ${index + 1} of ${entries.length}`
    if (entry.length === 0) return Either.left(`${variable}: ${where} is empty; ${expected}`)
    const colon = entry.indexOf(":")
    const named = colon >= 0 ? entry.slice(0, colon) : undefined
    const encoded = colon >= 0 ? entry.slice(colon + 1) : entry
    if (named !== undefined && !kidPattern.test(named)) {
      return Either.left(`${variable}: the id of ${where} is not 1 to 32 letters, digits, _ or -; ${expected}`)
    }
    const bytes = base64Pattern.test(encoded) ? Buffer.from(encoded, "base64") : undefined
    if (bytes === undefined || bytes.length !== keyLength) {
      return Either.left(
        `${variable}: ${where} is not 32 bytes in base64${bytes === undefined ? "" : ` (it decodes to ${bytes.length} bytes)`}; ${expected}`
      )
    }
    const kid = named ?? derivedKid(bytes)
    if (keys.some((key) => key.kid === kid)) return Either.left(`${variable}: two keys have the id ${kid}; each id must be unique`)
    keys.push({ kid, key: Redacted.make(new Uint8Array(bytes)) })
  }
  return Either.right(keys)
}

/** base64url without padding, refused unless canonical (so that each value has one spelling). */
const decodePart = (part: string): Buffer | undefined => {
  if (!/^[A-Za-z0-9_-]*$/.test(part)) return undefined
  const bytes = Buffer.from(part, "base64url")
  return bytes.toString("base64url") === part ? bytes : undefined
}

const unavailable = new SecretVaultUnavailable({
  message: `No secrets key is configured: set ${variable} to 32 random bytes in base64 (for example the output of ` +
    "`openssl rand -base64 32`) to store identity-provider secrets"
})
const malformed = new SecretUnreadable({ message: "The sealed secret is malformed" })
const unknownKey = new SecretUnreadable({
  message: `The sealed secret names a key that is not configured: ${variable} no longer holds the key that sealed it`
})
const unopenable = new SecretUnreadable({ message: "The sealed secret cannot be opened: it was changed" })

/** The key id a sealed value names (None when it is not one of ours). */
const kidOf = (sealed: string): Option.Option<string> => {
  const parts = sealed.split(".")
  return parts.length === 5 && parts[0] === version ? Option.some(parts[1]!) : Option.none()
}

/** A vault with these keys, the first sealing; with none, unavailable (seal and open fail naming the variable). */
export const make = (keys: ReadonlyArray<VaultKey>): SecretVault["Type"] => {
  const byKid = new Map(keys.map(({ key, kid }) => {
    const secret = Buffer.from(Redacted.value(key))
    if (secret.length !== keyLength) throw new Error(`A ${variable} key must be ${keyLength} bytes (AES-256), not ${secret.length}`)
    return [kid, secret] as const
  }))
  const current = keys[0]
  if (current === undefined) {
    return SecretVault.of({
      available: false,
      seal: () => Effect.fail(unavailable),
      open: () => Effect.fail(unavailable),
      isStale: () => false
    })
  }
  const sealingKey = byKid.get(current.kid)!
  return SecretVault.of({
    available: true,
    seal: (plaintext) =>
      Effect.sync(() => {
        const iv = NodeCrypto.randomBytes(ivLength)
        const encryption = NodeCrypto.createCipheriv(cipher, sealingKey, iv, { authTagLength: tagLength })
        encryption.setAAD(Buffer.from(`${version}.${current.kid}`, "utf8"))
        const ciphertext = Buffer.concat([encryption.update(plaintext, "utf8"), encryption.final()])
        return [version, current.kid, iv.toString("base64url"), ciphertext.toString("base64url"), encryption.getAuthTag().toString("base64url")]
          .join(".")
      }),
    open: (sealed) =>
      Effect.suspend(() => {
        const parts = sealed.split(".")
        if (parts.length !== 5 || parts[0] !== version) return Effect.fail(malformed)
        const kid = parts[1]!
        const [iv, ciphertext, tag] = parts.slice(2).map(decodePart)
        if (iv?.length !== ivLength || ciphertext === undefined || tag?.length !== tagLength) return Effect.fail(malformed)
        const secret = byKid.get(kid)
        if (secret === undefined) return Effect.fail(unknownKey)
        const decryption = NodeCrypto.createDecipheriv(cipher, secret, iv, { authTagLength: tagLength })
        decryption.setAAD(Buffer.from(`${version}.${kid}`, "utf8"))
        decryption.setAuthTag(tag)
        try {
          return Effect.succeed(Buffer.concat([decryption.update(ciphertext), decryption.final()]).toString("utf8"))
        } catch {
          // final() throws when the tag does not authenticate: a changed IV, ciphertext, tag or header.
          return Effect.fail(unopenable)
        }
      }),
    isStale: (sealed) => Option.match(kidOf(sealed), { onNone: () => true, onSome: (kid) => kid !== current.kid })
  })
}

/** The vault with these keys (none: unavailable). */
export const layer = (keys: ReadonlyArray<VaultKey>): Layer.Layer<SecretVault> => Layer.sync(SecretVault, () => make(keys))

/** The vault without keys: every seal and open fails naming CONVENE_SECRETS_KEY. */
export const unavailableLayer: Layer.Layer<SecretVault> = layer([])
