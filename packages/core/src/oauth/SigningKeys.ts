/**
 * The authorization server's signing keys: one active RS256 key signs ID tokens; it is made on first use and
 * kept in the store with its private half sealed (SecretBox), so a restart or another server process signs
 * with the same key. Rotation retires the active key and makes a new one; a retired key stays published in
 * the key set until the last token it signed has expired.
 */
import { Context, DateTime, Duration, Effect, Layer } from "effect"
import { Crypto } from "../ports/Crypto.js"
import { Transactor } from "../ports/Transactor.js"
import { now } from "../shared/Time.js"
import { SigningKey } from "./OAuth.js"
import { OAuthStore } from "./OAuthStore.js"
import { type Jwk, JwtSigner, SecretBox } from "./Signing.js"
import { fn } from "../shared/Span.js"

/** How long a token signed by a key may live: a retired key is published this long after it retired. */
export const signedTokenLifetime = Duration.hours(1)

const make = Effect.gen(function*() {
  const store = yield* OAuthStore
  const signer = yield* JwtSigner
  const box = yield* SecretBox
  const transactor = yield* Transactor
  const crypto = yield* Crypto
  /** Private keys opened once per process, by kid. */
  const opened = new Map<string, Jwk>()

  const generate = Effect.gen(function*() {
    const { kid, privateJwk, publicJwk } = yield* signer.generate
    return new SigningKey({
      kid,
      algorithm: "RS256",
      public_jwk: JSON.stringify(publicJwk),
      sealed_private_jwk: yield* box.seal(JSON.stringify(privateJwk)),
      created_at: yield* now,
      retired_at: null
    })
  })

  /** The active key, made when there is none (another process making one at the same time wins: its key is used). */
  const active: Effect.Effect<SigningKey> = Effect.gen(function*() {
    const current = (yield* store.signingKeys).find((key) => key.retired_at === null)
    if (current !== undefined) return current
    const key = yield* generate
    const inserted = yield* store.insertSigningKey(key).pipe(Effect.as(true), Effect.catchTag("DuplicateKey", () => Effect.succeed(false)))
    if (inserted) return key
    const winner = (yield* store.signingKeys).find((candidate) => candidate.retired_at === null)
    return winner ?? (yield* Effect.dieMessage("no active signing key after another process made one"))
  })

  const privateJwkOf = (key: SigningKey) =>
    Effect.gen(function*() {
      const cached = opened.get(key.kid)
      if (cached !== undefined) return cached
      const jwk = JSON.parse(yield* box.open(key.sealed_private_jwk)) as Jwk
      opened.set(key.kid, jwk)
      return jwk
    })

  /**
   * Checks at start that the active key exists and opens with this installation's secret key: a server started
   * with another secret key must not find out on its first sign-in.
   */
  const ensure = fn("SigningKeys.ensure")(function*() {
    const key = yield* active
    yield* privateJwkOf(key)
    return key.kid
  })

  /** A JWT of the claims, signed by the active key. */
  const sign = fn("SigningKeys.sign")(function*(claims: Readonly<Record<string, unknown>>) {
    const key = yield* active
    const jwk = yield* privateJwkOf(key).pipe(Effect.orDie)
    return yield* signer.sign(jwk, key.kid, claims)
  })

  /** The published key set: the active key and those retired less than a token lifetime ago. */
  const jwks = fn("SigningKeys.jwks")(function*() {
    yield* active
    const at = yield* now
    const keys = (yield* store.signingKeys).filter((key) =>
      key.retired_at === null || DateTime.greaterThan(DateTime.addDuration(key.retired_at, signedTokenLifetime), at)
    )
    return { keys: keys.map((key) => JSON.parse(key.public_jwk) as Jwk) }
  })

  /** Retires the active key and makes a new one; answers the new key's id. */
  const rotate = fn("SigningKeys.rotate")(function*() {
    const key = yield* generate
    yield* transactor.withTransaction(Effect.gen(function*() {
      const current = (yield* store.signingKeys).find((candidate) => candidate.retired_at === null)
      if (current !== undefined) yield* store.retireSigningKey(current.kid, yield* now)
      yield* store.insertSigningKey(key).pipe(Effect.orDie)
    }))
    return key.kid
  })

  /**
   * A secret for `purpose` (an HMAC key, e.g. of pre-signed download URLs), derived from a signing key's private
   * key: HMAC-SHA256(d, "convene/" + purpose). Every process sharing the store derives the same one, and it changes
   * when the key is rotated. `kid` picks a key the JWKS still publishes (for checking); without it, the active key.
   */
  const derivedKey = fn("SigningKeys.derivedKey")(function*(purpose: string, kid?: string) {
    const key = kid === undefined ? yield* active : (yield* store.signingKeys).find((candidate) => candidate.kid === kid)
    if (key === undefined) return undefined
    if (key.retired_at !== null && DateTime.lessThanOrEqualTo(DateTime.addDuration(key.retired_at, signedTokenLifetime), yield* now)) {
      return undefined
    }
    const jwk = yield* privateJwkOf(key).pipe(Effect.orDie)
    return { kid: key.kid, secret: yield* crypto.hmacSha256(String(jwk["d"]), `convene/${purpose}`) }
  })

  return { ensure, sign, jwks, rotate, derivedKey } as const
})

export class SigningKeys extends Context.Tag("@convene/core/SigningKeys")<SigningKeys, Effect.Effect.Success<typeof make>>() {
  static readonly layer: Layer.Layer<SigningKeys, never, OAuthStore | JwtSigner | SecretBox | Transactor | Crypto> = Layer.effect(
    SigningKeys,
    make
  )
}
