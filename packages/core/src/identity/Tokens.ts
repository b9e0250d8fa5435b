/**
 * Minting credentials: personal access tokens, short-lived tokens and workspace API keys. A token is its
 * documented prefix plus 32 random bytes (256 bits) in base64url; only its SHA-256 is stored.
 */
import { Context, DateTime, Effect, Encoding, Layer, Option, Schema } from "effect"
import { Crypto } from "../ports/Crypto.js"
import { InsufficientScope, NotFound, PlanRequired, ValidationError } from "../shared/Errors.js"
import { CredentialId, UserId, WorkspaceId } from "../shared/Ids.js"
import { clamp, type PageRequest, sliceOf, toList } from "../shared/Pagination.js"
import { requestBody, Title } from "../shared/Text.js"
import { now, Timestamp } from "../shared/Time.js"
import { trusted } from "../shared/Trusted.js"
import { atLeast, personalAccessTokensFrom } from "../workspaces/Plans.js"
import { Workspaces } from "../workspaces/Workspaces.js"
import {
  Credential,
  CredentialKind,
  grantsOf,
  HeldScope,
  isWorkspaceScope,
  type Principal,
  type PrincipalKind,
  Scope,
  Scopes,
  scopesGranted,
  tokenPrefix,
  type User,
  userCredentialKinds
} from "./Identity.js"
import { type CredentialFilter, CredentialStore, UserStore } from "./IdentityStore.js"
import { Users } from "./Users.js"
import { fn } from "../shared/Span.js"

export const ExpiryDays = Schema.Literal(30, 60, 90, 180, 365)
export const ExpiryHours = Schema.Literal(1, 2, 4, 6)

/** What may issue personal access tokens to its user: long-lived user credentials and the signed-in session. */
export const tokenIssuers: ReadonlyArray<PrincipalKind> = ["personal_access_token", "access_token", "session"]

const kindNames: Record<PrincipalKind, string> = {
  session: "signed-in session",
  partner_access_token: "partner app access token",
  partner_refresh_token: "partner app refresh token",
  access_token: "OAuth access token",
  refresh_token: "refresh token",
  personal_access_token: "personal access token",
  short_lived: "short-lived token",
  api_key: "workspace API key"
}

const TokenScopes = Schema.Array(Scope).pipe(
  Schema.minItems(1, { message: () => "must name at least one scope" })
)

/** The operator's request: either kind, with the same rules as the user-facing paths. */
export class IssueToken extends Schema.Class<IssueToken>("IssueToken")({
  kind: Schema.Literal("personal_access_token", "short_lived"),
  scopes: TokenScopes,
  name: Schema.optional(Title(200)),
  expiry_days: Schema.optional(ExpiryDays),
  expiry_hours: Schema.optional(ExpiryHours)
}, requestBody) {}

/** The user's request on POST /v1/user/tokens: a personal access token. */
export class IssuePersonalAccessToken extends Schema.Class<IssuePersonalAccessToken>("IssuePersonalAccessToken")({
  name: Title(200),
  scopes: TokenScopes,
  expiry_days: ExpiryDays
}, requestBody) {}

/** A freshly minted token: the only time the plaintext is shown. */
export class IssuedToken extends Schema.Class<IssuedToken>("IssuedToken")({
  id: CredentialId,
  name: Schema.NullOr(Schema.String),
  kind: Schema.Literal("personal_access_token", "short_lived", "api_key", "access_token", "refresh_token"),
  token: Schema.String,
  scopes: Schema.Array(Scope),
  expires_at: Schema.NullOr(Timestamp),
  created_at: Timestamp
}) {}

/** A token as listed: never the token itself. */
export class TokenRecord extends Schema.Class<TokenRecord>("TokenRecord")({
  id: CredentialId,
  name: Schema.NullOr(Schema.String),
  kind: Schema.String,
  scopes: Schema.Array(HeldScope),
  expires_at: Schema.NullOr(Timestamp),
  created_at: Timestamp
}) {}

/**
 * A credential as the operator lists it: never the token nor its hash. `scopes` are those it authenticates with
 * now (see `scopesGranted`).
 */
export class CredentialView extends Schema.Class<CredentialView>("CredentialView")({
  id: CredentialId,
  workspace_id: WorkspaceId,
  user_id: Schema.NullOr(UserId).annotations({ description: "the user who holds it; null for a workspace API key" }),
  kind: CredentialKind,
  name: Schema.NullOr(Schema.String),
  scopes: Schema.Array(HeldScope).annotations({
    description: "the scopes it authenticates with now: of a user's token, those it was issued with that the user's current role grants"
  }),
  client_id: Schema.NullOr(Schema.String).annotations({ description: "the OAuth client it was issued to, if any" }),
  expires_at: Schema.NullOr(Timestamp),
  created_at: Timestamp
}) {}

export class CreateApiKey extends Schema.Class<CreateApiKey>("CreateApiKey")({
  name: Title(200)
}, requestBody) {}

export class IssuedApiKey extends Schema.Class<IssuedApiKey>("IssuedApiKey")({
  id: CredentialId,
  name: Schema.String,
  key: Schema.String,
  created_at: Timestamp
}) {}

const make = Effect.gen(function*() {
  const store = yield* CredentialStore
  const userStore = yield* UserStore
  const users = yield* Users
  const workspaces = yield* Workspaces
  const crypto = yield* Crypto

  /** A new plaintext token of `kind` and the hash that is stored for it. */
  const mint = fn("Tokens.mint")(function*(kind: CredentialKind) {
    const token = tokenPrefix[kind] + Encoding.encodeBase64Url(yield* crypto.randomBytes(32))
    return { token, hash: yield* crypto.sha256(token) }
  })

  const checkScopes = (user: User, kind: "personal_access_token" | "short_lived", scopes: ReadonlyArray<Scope>) => {
    const granted = grantsOf(user.role)
    const missing = scopes.filter((scope) => !granted.includes(scope))
    if (missing.length > 0) {
      return Effect.fail(ValidationError.of("scopes", `${missing.join(", ")} not granted to the role ${user.role}`))
    }
    if (kind === "short_lived" && scopes.some(isWorkspaceScope)) {
      return Effect.fail(ValidationError.of("scopes", "a short-lived token cannot carry workspace scopes"))
    }
    return Effect.void
  }

  const lifetime = (input: IssueToken) => {
    if (input.kind === "personal_access_token") {
      if (input.expiry_hours !== undefined) {
        return Effect.fail(ValidationError.of("expiry_hours", "only short-lived tokens take expiry_hours; use expiry_days"))
      }
      return input.expiry_days === undefined
        ? Effect.fail(ValidationError.of("expiry_days", "is required for a personal access token (30, 60, 90, 180 or 365)"))
        : Effect.succeed({ days: input.expiry_days })
    }
    if (input.expiry_days !== undefined) {
      return Effect.fail(ValidationError.of("expiry_days", "only personal access tokens take expiry_days; use expiry_hours"))
    }
    return input.expiry_hours === undefined
      ? Effect.fail(ValidationError.of("expiry_hours", "is required for a short-lived token (1, 2, 4 or 6)"))
      : Effect.succeed({ hours: input.expiry_hours })
  }

  /** Issues a personal access token or a short-lived token to the user. */
  const issue = fn("Tokens.issue")(function*(userId: UserId, input: IssueToken) {
    const user = yield* users.get(userId)
    const workspace = yield* workspaces.get(user.workspace_id)
    const duration = yield* lifetime(input)
    if (input.kind === "personal_access_token" && !atLeast(workspace.plan, personalAccessTokensFrom)) {
      return yield* Effect.fail(
        new PlanRequired({
          feature: "personal_access_tokens",
          current_plan: workspace.plan,
          required_plan: personalAccessTokensFrom,
          message: `personal access tokens need the ${personalAccessTokensFrom} plan or higher`
        })
      )
    }
    yield* checkScopes(user, input.kind, input.scopes)
    const at = yield* now
    const { hash, token } = yield* mint(input.kind)
    const scopes = Scopes.filter((scope) => input.scopes.includes(scope))
    const credential = new Credential({
      id: CredentialId.make(yield* crypto.randomUUID),
      workspace_id: user.workspace_id,
      user_id: user.id,
      kind: input.kind,
      name: input.name ?? null,
      scopes,
      token_hash: hash,
      client_id: null,
      expires_at: DateTime.addDuration(at, "days" in duration ? `${duration.days} days` : `${duration.hours} hours`),
      revoked_at: null,
      created_at: at
    })
    // Written where the workspace (and with it its user) is held against its deletion, which may have begun since.
    yield* workspaces.within(user.workspace_id, store.insert(credential).pipe(Effect.orDie))
    return new IssuedToken({ ...credential, kind: input.kind, scopes, token })
  })

  /**
   * POST /v1/user/tokens: the caller issues a personal access token to themself, within their own scopes.
   * Only a credential that is itself long-lived and user-held may do so (see `tokenIssuers`): a short-lived
   * token must not outlive itself through a token it mints, and a workspace API key is no user.
   */
  const issueForCaller = fn("Tokens.issueForCaller")(function*(principal: Principal, input: IssuePersonalAccessToken) {
    if (!tokenIssuers.includes(principal.kind) || principal.user_id === null) {
      return yield* Effect.fail(
        new InsufficientScope({
          required: tokenIssuers.join(" "),
          message: `a ${kindNames[principal.kind]} cannot issue tokens; use a personal access token, an OAuth access token or the signed-in session`
        })
      )
    }
    const beyond = input.scopes.filter((scope) => !principal.scopes.includes(scope))
    if (beyond.length > 0) {
      return yield* Effect.fail(ValidationError.of("scopes", `${beyond.join(", ")} not held by this credential`))
    }
    return yield* issue(principal.user_id, new IssueToken({ kind: "personal_access_token", ...input }))
  })

  const issueApiKey = fn("Tokens.issueApiKey")(function*(workspaceId: WorkspaceId, input: CreateApiKey) {
    yield* workspaces.get(workspaceId)
    const at = yield* now
    const { hash, token } = yield* mint("api_key")
    const credential = new Credential({
      id: CredentialId.make(yield* crypto.randomUUID),
      workspace_id: workspaceId,
      user_id: null,
      kind: "api_key",
      name: input.name,
      scopes: [...Scopes],
      token_hash: hash,
      client_id: null,
      expires_at: null,
      revoked_at: null,
      created_at: at
    })
    yield* workspaces.within(workspaceId, store.insert(credential).pipe(Effect.orDie))
    return new IssuedApiKey({ id: credential.id, name: input.name, key: token, created_at: at })
  })

  /** A page of the caller's live personal access tokens, newest first. */
  const listForCaller = fn("Tokens.listForCaller")(function*(principal: Principal, request: PageRequest) {
    const page = clamp(request)
    if (principal.user_id === null) return toList({ items: [], total: 0 }, page)
    const at = yield* now
    const live = (yield* store.listByUser(principal.user_id))
      .filter((c) =>
        c.kind === "personal_access_token" && c.revoked_at === null &&
        (c.expires_at === null || DateTime.greaterThan(c.expires_at, at))
      )
      .map((c) => new TokenRecord(c))
    return toList(sliceOf(live, page), page)
  })

  /** Revokes one of the user's tokens by id: 403 for another user's token, 404 for an unknown or revoked one. */
  const revokeOwn = fn("Tokens.revokeOwn")(function*(
    owner: { readonly workspace_id: WorkspaceId; readonly user_id: UserId | null },
    id: CredentialId
  ) {
    const found = yield* store.get(owner.workspace_id, id)
    if (Option.isNone(found) || found.value.revoked_at !== null || found.value.kind === "api_key") {
      return yield* Effect.fail(NotFound.of("token", id))
    }
    if (found.value.user_id !== owner.user_id) {
      return yield* Effect.fail(new InsufficientScope({ required: "owner", message: "only the token's owner can delete it" }))
    }
    yield* store.revoke(id, yield* now)
  })

  /**
   * Revokes one of the caller's personal access tokens by id: every client using it gets 401 from then on.
   * Another user's token is 403; an unknown or already revoked one is 404.
   */
  const revokeForCaller = fn("Tokens.revokeForCaller")(function*(principal: Principal, id: CredentialId) {
    return yield* revokeOwn(principal, id)
  })

  /** The user's live personal access tokens and short-lived tokens, newest first (the signed-in account page). */
  const listOwn = fn("Tokens.listOwn")(function*(userId: UserId) {
    const at = yield* now
    return (yield* store.listByUser(userId))
      .filter((c) =>
        (c.kind === "personal_access_token" || c.kind === "short_lived") && c.revoked_at === null &&
        (c.expires_at === null || DateTime.greaterThan(c.expires_at, at))
      )
      .map((c) => new TokenRecord(c))
  })

  /** Credentials as the operator sees them, with the scopes each authenticates with now. */
  const viewsOf = (workspaceId: WorkspaceId, credentials: ReadonlyArray<Credential>) =>
    Effect.gen(function*() {
      const holderIds = [...new Set(credentials.flatMap((c) => (c.user_id === null ? [] : [c.user_id])))]
      const holders = new Map((yield* userStore.getMany(workspaceId, holderIds)).map((user) => [user.id, user]))
      return credentials.map((credential) => {
        const holder = credential.user_id === null ? undefined : holders.get(credential.user_id)
        return new CredentialView({
          id: credential.id,
          workspace_id: credential.workspace_id,
          user_id: credential.user_id,
          kind: credential.kind,
          name: credential.name,
          client_id: credential.client_id,
          expires_at: credential.expires_at,
          created_at: credential.created_at,
          scopes: credential.user_id === null
            ? credential.scopes
            : holder === undefined
            ? []
            : scopesGranted(credential.scopes, holder.role)
        }, trusted)
      })
    })

  /** A page of the live credentials `filter` passes, newest first. */
  const listLive = (filter: Omit<CredentialFilter, "liveAt">, request: PageRequest) =>
    Effect.gen(function*() {
      const page = clamp(request)
      const slice = yield* store.list({ ...filter, liveAt: yield* now }, page)
      return toList({ items: yield* viewsOf(filter.workspaceId, slice.items), total: slice.total }, page)
    })

  /** The live tokens every user of the workspace holds (not its API keys), newest first. */
  const listForWorkspace = fn("Tokens.listForWorkspace")(function*(workspaceId: WorkspaceId, request: PageRequest) {
    yield* workspaces.get(workspaceId)
    return yield* listLive({ workspaceId, kinds: userCredentialKinds }, request)
  })

  /** The workspace's live API keys, newest first. */
  const listApiKeys = fn("Tokens.listApiKeys")(function*(workspaceId: WorkspaceId, request: PageRequest) {
    yield* workspaces.get(workspaceId)
    return yield* listLive({ workspaceId, kinds: ["api_key"] }, request)
  })

  /** The user's live tokens, newest first. */
  const listForUser = fn("Tokens.listForUser")(function*(userId: UserId, request: PageRequest) {
    const user = yield* users.get(userId)
    return yield* listLive({ workspaceId: user.workspace_id, userId: user.id }, request)
  })

  /**
   * The operator revokes any credential by id, a token or an API key: it stops authenticating at once. An
   * unknown or already revoked one is NotFound.
   */
  const revoke = fn("Tokens.revoke")(function*(id: CredentialId) {
    const changed = yield* store.revoke(id, yield* now)
    if (!changed) return yield* Effect.fail(NotFound.of("token", id))
  })

  return {
    issue,
    issueForCaller,
    issueApiKey,
    listForCaller,
    revokeForCaller,
    revokeOwn,
    listOwn,
    listForWorkspace,
    listApiKeys,
    listForUser,
    revoke
  } as const
})

export class Tokens extends Context.Tag("@convene/core/Tokens")<Tokens, Effect.Effect.Success<typeof make>>() {
  static readonly layer: Layer.Layer<Tokens, never, CredentialStore | UserStore | Users | Workspaces | Crypto> = Layer
    .effect(Tokens, make)
}
