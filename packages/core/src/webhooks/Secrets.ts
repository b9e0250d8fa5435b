/**
 * An endpoint's secrets: minted here, stored only sealed (SecretBox), opened only to sign a request or build a
 * challenge. A secret that does not open means the installation's key changed: a defect, not the receiver's fault.
 */
import { Effect, Encoding } from "effect"
import { SecretBox } from "../oauth/Signing.js"
import { Crypto } from "../ports/Crypto.js"
import type { WebhookEndpoint } from "./Webhook.js"

/** The documented look of the secrets: a prefix and 32 random bytes (256 bits) in base64url. */
const mint = (prefix: string) =>
  Effect.flatMap(Crypto, (crypto) => Effect.map(crypto.randomBytes(32), (bytes) => prefix + Encoding.encodeBase64Url(bytes)))

/** A new signing secret (`whsec_...`) and its sealed form. */
export const mintSigningSecret = Effect.gen(function*() {
  const secret = yield* mint("whsec_")
  return { secret, sealed: yield* (yield* SecretBox).seal(secret) }
})

/** A new verification token (`whvt_...`) and its sealed form. */
export const mintVerificationToken = Effect.gen(function*() {
  const token = yield* mint("whvt_")
  return { token, sealed: yield* (yield* SecretBox).seal(token) }
})

/** A sealed secret in clear (a partner app's webhook secret, an endpoint's signing secret). */
export const openSealed = (sealed: string) => Effect.flatMap(SecretBox, (box) => Effect.orDie(box.open(sealed)))

/** The endpoint's signing secret in clear. */
export const openSigningSecret = (endpoint: WebhookEndpoint) => openSealed(endpoint.sealed_signing_secret)

/** The endpoint's signing secret and verification token in clear. */
export const openSecrets = (endpoint: WebhookEndpoint) =>
  Effect.gen(function*() {
    const box = yield* SecretBox
    return {
      secret: yield* Effect.orDie(box.open(endpoint.sealed_signing_secret)),
      token: yield* Effect.orDie(box.open(endpoint.sealed_verification_token))
    }
  })
