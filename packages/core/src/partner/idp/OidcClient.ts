/**
 * Port: what partner single sign-on asks of an OpenID Connect provider, through the outbound rules (Outbound): the
 * authorization code exchanged for an ID token, and the ID token's signature verified against the provider's keys.
 * The claims are checked by core (PartnerSso: issuer, audience, expiry, nonce, azp), so that the rules are tested on
 * the TestClock. Adapter: @convene/node (NodeOidcClient, with `jose`).
 */
import { Context, type Effect, type Redacted, Schema } from "effect"

/** The provider could not be used: `exchange` (the token endpoint) or `id_token` (the token or the key set). */
export class OidcFailure extends Schema.TaggedError<OidcFailure>()("OidcFailure", {
  step: Schema.Literal("exchange", "id_token"),
  /** Names the provider's answer, never a secret. */
  message: Schema.String,
  /** The provider's OAuth error code (`invalid_client`, `invalid_grant`, ...), when it answered one. */
  error: Schema.optional(Schema.String)
}) {}

/** How the client authenticates at the token endpoint (HTTP Basic, or the client id and secret in the form). */
export type IdpClientAuth = "client_secret_basic" | "client_secret_post"

export interface CodeExchange {
  readonly tokenEndpoint: string
  readonly clientId: string
  readonly clientSecret: Redacted.Redacted<string>
  readonly auth: IdpClientAuth
  readonly code: string
  readonly redirectUri: string
  readonly codeVerifier: Redacted.Redacted<string>
}

export class OidcClient extends Context.Tag("@convene/core/OidcClient")<OidcClient, {
  /** POSTs the code to the token endpoint (grant_type authorization_code, PKCE verifier); answers the `id_token`. */
  readonly exchangeCode: (request: CodeExchange) => Effect.Effect<string, OidcFailure>
  /**
   * The claims of an ID token whose signature one of the provider's keys (`jwksUri`) verifies, under an asymmetric
   * algorithm (never `none`, never a shared-secret one). The claims themselves are not checked here.
   */
  readonly verifiedClaims: (
    idToken: string,
    jwksUri: string
  ) => Effect.Effect<Readonly<Record<string, unknown>>, OidcFailure>
}>() {}
