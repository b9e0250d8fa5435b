/**
 * The core's OidcClient port on panva's `jose`, every call through the Outbound port (so under the outbound rules:
 * HTTPS, no private address unless allowed, no redirects, a time limit and a size cap):
 * - the code exchange POSTs a form to the token endpoint (HTTP Basic with the form-encoded client id and secret, RFC
 *   6749 2.3.1, or both in the form) and reads `id_token` from a 200 JSON answer;
 * - the ID token's signature is verified with `compactVerify` against the provider's key set, fetched from `jwks_uri`
 *   and cached per URI; a token signed by a key the cached set lacks (the provider rotated) fetches the set again,
 *   once. Only asymmetric algorithms are accepted: never `none`, never an HMAC keyed by something public.
 * The claims are not checked here (core's PartnerSso does it).
 */
import { OidcClient, OidcFailure, Outbound } from "@convene/core"
import { Effect, Encoding, Layer, Redacted } from "effect"
import { compactVerify, createLocalJWKSet, errors, type JSONWebKeySet } from "jose"

/** The algorithms an ID token may be signed with. */
export const algorithms = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"]

type KeySet = ReturnType<typeof createLocalJWKSet>

const exchangeFailed = (message: string, error?: string) =>
  new OidcFailure({ step: "exchange", message, ...(error === undefined ? {} : { error }) })
const tokenFailed = (message: string) => new OidcFailure({ step: "id_token", message })

/** The provider's `error` code when its answer carries a plain one (never its description: it is the provider's text). */
const errorCodeOf = (body: string): string | undefined => {
  try {
    const parsed: unknown = JSON.parse(body)
    const error = typeof parsed === "object" && parsed !== null ? (parsed as { readonly error?: unknown }).error : undefined
    return typeof error === "string" && /^[\w.-]{1,64}$/.test(error) ? error : undefined
  } catch {
    return undefined
  }
}

const parseJson = (body: string): unknown => {
  try {
    return JSON.parse(body)
  } catch {
    return undefined
  }
}

const formEncode = (value: string) => encodeURIComponent(value).replace(/%20/g, "+")

export const make = Effect.gen(function*() {
  const outbound = yield* Outbound
  const keySets = new Map<string, KeySet>()

  const fetchKeySet = (jwksUri: string) =>
    Effect.gen(function*() {
      const answer = yield* outbound.get({ url: jwksUri, headers: { accept: "application/json" } }).pipe(
        Effect.mapError((failed) => tokenFailed(`the identity provider's keys could not be fetched: ${failed.message}`))
      )
      if (answer.status !== 200) return yield* tokenFailed(`the identity provider's keys answered ${answer.status}`)
      const parsed = parseJson(answer.body)
      const keys = typeof parsed === "object" && parsed !== null ? (parsed as { readonly keys?: unknown }).keys : undefined
      if (!Array.isArray(keys)) return yield* tokenFailed("the identity provider's keys are not a JSON Web Key Set")
      const keySet = yield* Effect.try({
        try: () => createLocalJWKSet(parsed as JSONWebKeySet),
        catch: () => tokenFailed("the identity provider's keys are not a JSON Web Key Set")
      })
      keySets.set(jwksUri, keySet)
      return keySet
    })

  const verifyWith = (keySet: KeySet, idToken: string) =>
    Effect.tryPromise({
      try: () => compactVerify(idToken, keySet, { algorithms }),
      catch: (cause) => cause
    })

  const verifiedClaims = (idToken: string, jwksUri: string) =>
    Effect.gen(function*() {
      const cached = keySets.get(jwksUri)
      const first = yield* Effect.either(verifyWith(cached ?? (yield* fetchKeySet(jwksUri)), idToken))
      const verified = first._tag === "Right"
        ? first.right
        : cached !== undefined && first.left instanceof errors.JWKSNoMatchingKey
        ? yield* verifyWith(yield* fetchKeySet(jwksUri), idToken).pipe(Effect.mapError(describe))
        : yield* Effect.fail(describe(first.left))
      const claims = parseJson(new TextDecoder().decode(verified.payload))
      if (typeof claims !== "object" || claims === null || Array.isArray(claims)) {
        return yield* tokenFailed("the ID token's payload is not a JSON object")
      }
      return claims as Readonly<Record<string, unknown>>
    })

  const exchangeCode: OidcClient["Type"]["exchangeCode"] = (request) =>
    Effect.gen(function*() {
      const clientId = request.clientId
      const secret = Redacted.value(request.clientSecret)
      const form: Array<readonly [string, string]> = [
        ["grant_type", "authorization_code"],
        ["code", request.code],
        ["redirect_uri", request.redirectUri],
        ["code_verifier", Redacted.value(request.codeVerifier)],
        ...(request.auth === "client_secret_post"
          ? [["client_id", clientId], ["client_secret", secret]] as const
          : [])
      ]
      const headers: Record<string, string> = {
        "content-type": "application/x-www-form-urlencoded",
        accept: "application/json",
        ...(request.auth === "client_secret_basic"
          ? { authorization: `Basic ${Encoding.encodeBase64(`${formEncode(clientId)}:${formEncode(secret)}`)}` }
          : {})
      }
      const answer = yield* outbound.post({
        url: request.tokenEndpoint,
        headers,
        body: form.map(([name, value]) => `${formEncode(name)}=${formEncode(value)}`).join("&")
      }).pipe(Effect.mapError((failed) => exchangeFailed(`the token endpoint could not be reached: ${failed.message}`)))
      if (answer.status !== 200) {
        const code = errorCodeOf(answer.body)
        return yield* exchangeFailed(`the token endpoint answered ${answer.status}${code === undefined ? "" : ` ${code}`}`, code)
      }
      const parsed = parseJson(answer.body)
      const idToken = typeof parsed === "object" && parsed !== null ? (parsed as { readonly id_token?: unknown }).id_token : undefined
      if (typeof idToken !== "string") return yield* exchangeFailed("the token endpoint's answer has no id_token")
      return idToken
    })

  return OidcClient.of({ exchangeCode, verifiedClaims })
})

/** Why jose refused a token, in words that name no key material. */
const describe = (cause: unknown): OidcFailure => {
  if (cause instanceof errors.JWKSNoMatchingKey) return tokenFailed("the ID token is signed by a key the identity provider does not publish")
  if (cause instanceof errors.JOSEAlgNotAllowed) return tokenFailed("the ID token's signing algorithm is not accepted")
  if (cause instanceof errors.JWSSignatureVerificationFailed) return tokenFailed("the ID token's signature does not verify")
  if (cause instanceof errors.JOSEError) return tokenFailed(`the ID token is not valid (${cause.code})`)
  return tokenFailed("the ID token is not valid")
}

export const layer: Layer.Layer<OidcClient, never, Outbound> = Layer.effect(OidcClient, make)
