/**
 * Turning a presented bearer token into a principal. The token is hashed and looked up by its hash (an
 * index lookup whose cost does not depend on how much of a guess is right), the stored hash is compared in
 * constant time, and expiry, revocation, the owner's current role and workspace are checked on every call.
 */
import { Context, DateTime, Effect, Layer, Option, Redacted, Schema } from "effect"
import { Crypto } from "../ports/Crypto.js"
import { Unauthenticated } from "../shared/Errors.js"
import { CredentialId, UserId, WorkspaceId } from "../shared/Ids.js"
import { now, Timestamp } from "../shared/Time.js"
import { trusted } from "../shared/Trusted.js"
import { type CredentialKind, Principal, Scope, Scopes, scopesGranted, tokenPrefix } from "./Identity.js"
import { CredentialStore } from "./IdentityStore.js"
import { fn } from "../shared/Span.js"

/** Kinds that are accepted as a bearer credential on resource endpoints (a refresh token is not). */
const bearerKinds: ReadonlyArray<CredentialKind> = ["access_token", "personal_access_token", "short_lived", "api_key"]
const bodyPattern = /^[A-Za-z0-9_-]{43}$/

const kindOf = (token: string): CredentialKind | undefined =>
  bearerKinds.find((kind) => token.startsWith(tokenPrefix[kind]) && bodyPattern.test(token.slice(tokenPrefix[kind].length)))

export class Introspection extends Schema.Class<Introspection>("Introspection")({
  active: Schema.Literal(true),
  token_id: CredentialId,
  kind: Schema.Literal("access_token", "personal_access_token", "short_lived", "api_key"),
  user_id: Schema.NullOr(UserId),
  workspace_id: WorkspaceId,
  scopes: Schema.Array(Scope),
  client_id: Schema.NullOr(Schema.String),
  expires_at: Schema.NullOr(Timestamp)
}) {}

const unauthenticated = (reason: Unauthenticated["reason"], message: string) =>
  Effect.fail(new Unauthenticated({ reason, message }))

const make = Effect.gen(function*() {
  const credentials = yield* CredentialStore
  const crypto = yield* Crypto

  const authenticate = fn("Authentication.authenticate")(function*(presented: Redacted.Redacted<string>) {
    const token = Redacted.value(presented).trim()
    if (token.length === 0) return yield* unauthenticated("missing", "a bearer token is required")
    const kind = kindOf(token)
    if (kind === undefined) return yield* unauthenticated("malformed", "the bearer token is malformed")
    const hash = yield* crypto.sha256(token)
    const found = yield* credentials.findByHashWithOwner(hash)
    // The hash covers the prefix, so a credential found by it is of the kind the prefix names.
    if (Option.isNone(found) || !crypto.timingSafeEqual(found.value.credential.token_hash, hash)) {
      return yield* unauthenticated("unknown", "the bearer token is not valid")
    }
    const { credential, owner: user } = found.value
    if (credential.revoked_at !== null) return yield* unauthenticated("revoked", "the bearer token was revoked")
    const at = yield* now
    if (credential.expires_at !== null && DateTime.lessThanOrEqualTo(credential.expires_at, at)) {
      return yield* unauthenticated("expired", "the bearer token expired")
    }
    if (credential.user_id === null) {
      return new Principal({
        credential_id: credential.id,
        kind: credential.kind,
        workspace_id: credential.workspace_id,
        user_id: null,
        role: null,
        scopes: credential.scopes,
        client_id: credential.client_id,
        expires_at: credential.expires_at
      }, trusted)
    }
    if (Option.isNone(user) || user.value.workspace_id !== credential.workspace_id) {
      return yield* unauthenticated("revoked", "the bearer token's user no longer exists")
    }
    // A role lowered since issue takes the scopes it no longer grants away from existing tokens.
    return new Principal({
      credential_id: credential.id,
      kind: credential.kind,
      workspace_id: credential.workspace_id,
      user_id: user.value.id,
      role: user.value.role,
      scopes: scopesGranted(credential.scopes, user.value.role),
      client_id: credential.client_id,
      expires_at: credential.expires_at
    }, trusted)
  })

  const introspect = (principal: Principal): Introspection =>
    new Introspection({
      active: true,
      token_id: principal.credential_id,
      kind: principal.kind as Introspection["kind"],
      user_id: principal.user_id,
      workspace_id: principal.workspace_id,
      scopes: Scopes.filter((scope) => principal.scopes.includes(scope)),
      client_id: principal.client_id,
      expires_at: principal.expires_at
    })

  return { authenticate, introspect } as const
})

export class Authentication extends Context.Tag("@convene/core/Authentication")<
  Authentication,
  Effect.Effect.Success<typeof make>
>() {
  static readonly layer: Layer.Layer<Authentication, never, CredentialStore | Crypto> = Layer.effect(
    Authentication,
    make
  )
}
