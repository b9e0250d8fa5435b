/**
 * Ports: what the authorization server needs of cryptography beyond hashing. Adapters: @convene/node (RSA keys
 * and JWTs with `jose`, AES-256-GCM with node:crypto).
 */
import { Context, type Effect, Schema } from "effect"

/** A JSON Web Key, as a plain JSON object. */
export type Jwk = Readonly<Record<string, unknown>>

/** Port: RS256 keys and JSON Web Tokens. */
export class JwtSigner extends Context.Tag("@convene/core/JwtSigner")<JwtSigner, {
  /** A new RSA key pair (2048 bits) for RS256; `kid` is the RFC 7638 thumbprint of the public key. */
  readonly generate: Effect.Effect<{ readonly kid: string; readonly publicJwk: Jwk; readonly privateJwk: Jwk }>
  /** A compact JWS (RS256, header `kid` and `typ: JWT`) of the claims. */
  readonly sign: (privateJwk: Jwk, kid: string, claims: Readonly<Record<string, unknown>>) => Effect.Effect<string>
}>() {}

/** The sealed value cannot be opened: it was sealed with another key, or changed. */
export class SealBroken extends Schema.TaggedError<SealBroken>()("SealBroken", {
  message: Schema.String
}) {}

/** Port: authenticated encryption of secrets kept in the store (private signing keys), with the installation's key. */
export class SecretBox extends Context.Tag("@convene/core/SecretBox")<SecretBox, {
  readonly seal: (plaintext: string) => Effect.Effect<string>
  readonly open: (sealed: string) => Effect.Effect<string, SealBroken>
}>() {}
