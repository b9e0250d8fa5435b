/**
 * panva's `jose` behind the core's JwtSigner port: RSA 2048 key pairs for RS256, exported as JWKs, and compact
 * JWTs signed with them. jose runs on WebCrypto (`globalThis.crypto`), present in every Node this package supports.
 *
 * The inputs come from the core (keys it generated here and kept sealed, claims it built), so a failure of jose
 * is a defect, not an error of the port.
 */
import { type Jwk, JwtSigner } from "@convene/core"
import { Effect, Layer } from "effect"
import {
  calculateJwkThumbprint,
  type CryptoKey,
  exportJWK,
  generateKeyPair,
  importJWK,
  type JWK,
  type JWTPayload,
  SignJWT
} from "jose"

const alg = "RS256"

/** A JwtSigner with its own cache of imported private keys (one import per key, not one per signature). */
export const make: Effect.Effect<JwtSigner["Type"]> = Effect.sync(() => {
  // By kid, with the modulus it was imported from: a kid paired with another key is imported afresh, never
  // signed with the cached key. Keys are rotated rarely, so the cache stays small.
  const imported = new Map<string, { readonly n: unknown; readonly key: Promise<CryptoKey> }>()

  const importKey = (privateJwk: Jwk, kid: string): Promise<CryptoKey> => {
    const cached = imported.get(kid)
    if (cached !== undefined && cached.n === privateJwk.n) return cached.key
    const key = importJWK(privateJwk as JWK, alg).then((key) => key as CryptoKey)
    const entry = { n: privateJwk.n, key }
    imported.set(kid, entry)
    // A key that failed to import is not kept: the next call tries again (and dies again, if the JWK is bad).
    key.catch(() => {
      if (imported.get(kid) === entry) imported.delete(kid)
    })
    return key
  }

  return JwtSigner.of({
    generate: Effect.promise(async () => {
      const { privateKey, publicKey } = await generateKeyPair(alg, { modulusLength: 2048, extractable: true })
      const [publicJwk, privateJwk] = await Promise.all([exportJWK(publicKey), exportJWK(privateKey)])
      const kid = await calculateJwkThumbprint(publicJwk, "sha256")
      const labels = { kid, alg, use: "sig" }
      return { kid, publicJwk: { ...publicJwk, ...labels }, privateJwk: { ...privateJwk, ...labels } }
    }).pipe(Effect.withSpan("JwtSigner.generate")),
    sign: (privateJwk, kid, claims) =>
      Effect.promise(async () =>
        new SignJWT(claims as JWTPayload)
          .setProtectedHeader({ alg, kid, typ: "JWT" })
          .sign(await importKey(privateJwk, kid))
      ).pipe(Effect.withSpan("JwtSigner.sign", { attributes: { kid } }))
  })
})

/** JwtSigner on `jose` (RS256). */
export const layer: Layer.Layer<JwtSigner> = Layer.effect(JwtSigner, make)
