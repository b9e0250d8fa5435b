/**
 * OAuth clients: the built-in first-party client `convene-cli`, first-party clients the operator adds, and
 * clients that register themselves (RFC 7591), managed with their registration access token (RFC 7592). What
 * each kind may register (redirect URIs, scopes, how it authenticates) is its ClientPolicy.
 */
import { Context, DateTime, Effect, Encoding, Layer, Option, Schema } from "effect"
import { Crypto } from "../ports/Crypto.js"
import { Transactor } from "../ports/Transactor.js"
import { ValidationError } from "../shared/Errors.js"
import { requestBody, Text, Title } from "../shared/Text.js"
import { now, Timestamp } from "../shared/Time.js"
import { parseUrl } from "../shared/Url.js"
import { isWorkspaceScope, type Scope, Scopes } from "../identity/Identity.js"
import { CredentialStore } from "../identity/IdentityStore.js"
import { type ClientPolicy, firstPartyClients } from "./ClientPolicy.js"
import { OAuthClient } from "./OAuth.js"
import { OAuthError } from "./OAuthError.js"
import { OAuthStore } from "./OAuthStore.js"
import * as RedirectUris from "./RedirectUris.js"
import { fn } from "../shared/Span.js"

/** The first-party public client every installation has: any loopback redirect URI, no consent page. */
export const builtInClientId = "convene-cli"

const epoch = DateTime.unsafeMake(0)

export const builtInClient = new OAuthClient({
  client_id: builtInClientId,
  kind: "first_party",
  name: "Convene CLI",
  redirect_uris: [],
  scope: null,
  client_uri: null,
  logo_uri: null,
  registration_token_hash: null,
  created_at: epoch,
  updated_at: epoch
})

/** The operator's request: another first-party public client, with loopback redirect URIs (none: any loopback URI). */
export class CreateFirstPartyClient extends Schema.Class<CreateFirstPartyClient>("CreateFirstPartyClient")({
  name: Title(200),
  redirect_uris: Schema.optional(
    Schema.Array(Text.pipe(Schema.maxLength(2000, { message: () => "must be at most 2000 characters" }))).pipe(
      Schema.maxItems(20, { message: () => "may list at most 20 URIs" })
    )
  )
}, requestBody) {}

export class CreatedClient extends Schema.Class<CreatedClient>("CreatedClient")({
  client_id: Schema.String,
  name: Schema.String,
  redirect_uris: Schema.Array(Schema.String),
  created_at: Timestamp
}) {}

/** Client metadata a client registers (RFC 7591 2); metadata the server does not know is ignored, as 2 says. */
export interface ClientMetadata {
  readonly redirect_uris?: unknown
  readonly client_name?: unknown
  readonly client_uri?: unknown
  readonly logo_uri?: unknown
  readonly scope?: unknown
  readonly grant_types?: unknown
  readonly response_types?: unknown
  readonly token_endpoint_auth_method?: unknown
  readonly client_id?: unknown
}

/** A registered client as RFC 7591 3.2.1 / RFC 7592 3 answer it. */
export interface RegisteredClient {
  readonly client_id: string
  readonly client_id_issued_at: number
  readonly client_name: string
  readonly redirect_uris: ReadonlyArray<string>
  readonly grant_types: ReadonlyArray<string>
  readonly response_types: ReadonlyArray<string>
  readonly token_endpoint_auth_method: ClientPolicy["tokenEndpointAuth"]
  readonly scope?: string
  readonly client_uri?: string
  readonly logo_uri?: string
  readonly registration_access_token?: string
}

const metadataError = (description: string) => OAuthError.of("invalid_client_metadata", description)
const redirectError = (description: string) => OAuthError.of("invalid_redirect_uri", description)

const isStringArray = (value: unknown): value is ReadonlyArray<string> =>
  Array.isArray(value) && value.every((item) => typeof item === "string")

const optionalUrl = (field: string, value: unknown) => {
  if (value === undefined || value === null) return Effect.succeed(null)
  if (typeof value !== "string" || value.length > 2000) return Effect.fail(metadataError(`${field} must be an https URL`))
  return parseUrl(value)?.protocol === "https:" ? Effect.succeed(value) : Effect.fail(metadataError(`${field} must be an https URL`))
}

/** The checked metadata of a registration or its update, by the policy of registered clients. */
const checkMetadata = (metadata: ClientMetadata, policy: ClientPolicy) =>
  Effect.gen(function*() {
    const uris = metadata.redirect_uris
    if (!isStringArray(uris) || uris.length === 0) {
      return yield* Effect.fail(redirectError("redirect_uris must be a non-empty array of URIs"))
    }
    if (uris.length > 20) return yield* Effect.fail(redirectError("redirect_uris may list at most 20 URIs"))
    for (const uri of uris) {
      const found = RedirectUris.classify(uri)
      const problem = "problem" in found
        ? found.problem
        : policy.redirectKinds.includes(found.kind)
        ? undefined
        : `is not allowed for this application (${policy.redirectKinds.join(", ")} only)`
      if (problem !== undefined) return yield* Effect.fail(redirectError(`redirect URI ${JSON.stringify(uri.slice(0, 100))} ${problem}`))
    }
    const name = metadata.client_name
    if (name !== undefined && (typeof name !== "string" || name.trim() === "" || name.length > 200 || /[\u0000-\u001f]/.test(name))) {
      return yield* Effect.fail(metadataError("client_name must be a text of 1 to 200 characters"))
    }
    let scope: ReadonlyArray<Scope> | null = null
    if (metadata.scope !== undefined && metadata.scope !== null) {
      if (typeof metadata.scope !== "string") return yield* Effect.fail(metadataError("scope must be a space-delimited string"))
      const asked = metadata.scope.split(" ").filter((item) => item !== "")
      const unknown = asked.filter((item) => item !== "openid" && !(Scopes as ReadonlyArray<string>).includes(item))
      if (unknown.length > 0) return yield* Effect.fail(metadataError(`unknown scope ${unknown[0]!.slice(0, 50)}`))
      const known = Scopes.filter((item) => asked.includes(item))
      if (!policy.workspaceScopes && known.some(isWorkspaceScope)) {
        return yield* Effect.fail(metadataError("registered clients cannot hold workspace scopes"))
      }
      scope = known
    }
    const grantTypes = metadata.grant_types ?? ["authorization_code", "refresh_token"]
    if (!isStringArray(grantTypes) || !grantTypes.includes("authorization_code") ||
      grantTypes.some((type) => type !== "authorization_code" && type !== "refresh_token")) {
      return yield* Effect.fail(metadataError("grant_types must include authorization_code and may add refresh_token, nothing else"))
    }
    const responseTypes = metadata.response_types ?? ["code"]
    if (!isStringArray(responseTypes) || responseTypes.length !== 1 || responseTypes[0] !== "code") {
      return yield* Effect.fail(metadataError("response_types must be [\"code\"]"))
    }
    const method = metadata.token_endpoint_auth_method ?? policy.tokenEndpointAuth
    if (method !== policy.tokenEndpointAuth) {
      return yield* Effect.fail(
        metadataError(`token_endpoint_auth_method must be ${policy.tokenEndpointAuth}: registered clients are public clients using PKCE`)
      )
    }
    return {
      redirect_uris: uris,
      client_name: typeof name === "string" ? name.trim() : null,
      scope,
      client_uri: yield* optionalUrl("client_uri", metadata.client_uri),
      logo_uri: yield* optionalUrl("logo_uri", metadata.logo_uri)
    }
  })

const registeredView = (client: OAuthClient, policy: ClientPolicy, registrationToken?: string): RegisteredClient => ({
  client_id: client.client_id,
  client_id_issued_at: Math.floor(DateTime.toEpochMillis(client.created_at) / 1000),
  client_name: client.name,
  redirect_uris: client.redirect_uris,
  grant_types: ["authorization_code", "refresh_token"],
  response_types: ["code"],
  token_endpoint_auth_method: policy.tokenEndpointAuth,
  ...(client.scope === null ? {} : { scope: client.scope.join(" ") }),
  ...(client.client_uri === null ? {} : { client_uri: client.client_uri }),
  ...(client.logo_uri === null ? {} : { logo_uri: client.logo_uri }),
  ...(registrationToken === undefined ? {} : { registration_access_token: registrationToken })
})

/** The client registry, with the policy of each kind of client it makes. */
const make = (policies: typeof firstPartyClients) => Effect.gen(function*() {
  const store = yield* OAuthStore
  const credentials = yield* CredentialStore
  const crypto = yield* Crypto
  const transactor = yield* Transactor

  const randomToken = (prefix: string) =>
    Effect.map(crypto.randomBytes(32), (bytes) => prefix + Encoding.encodeBase64Url(bytes))

  /** The client with that id: the built-in one or a stored one. */
  const find = (clientId: string): Effect.Effect<Option.Option<OAuthClient>> =>
    clientId === builtInClientId ? Effect.succeed(Option.some(builtInClient)) : store.getClient(clientId)

  /** The operator adds a first-party public client (loopback redirect URIs only, no consent page). */
  const createFirstParty = fn("Clients.createFirstParty")(function*(input: CreateFirstPartyClient) {
    const uris = input.redirect_uris ?? []
    for (const [index, uri] of uris.entries()) {
      const found = RedirectUris.classify(uri)
      if (!("kind" in found) || !policies.first_party.redirectKinds.includes(found.kind)) {
        return yield* Effect.fail(
          ValidationError.of(`redirect_uris[${index}]`, "must be a loopback URI such as http://127.0.0.1:8000/callback")
        )
      }
    }
    const at = yield* now
    const client = new OAuthClient({
      client_id: `cvc_${Encoding.encodeBase64Url(yield* crypto.randomBytes(16))}`,
      kind: "first_party",
      name: input.name,
      redirect_uris: uris,
      scope: null,
      client_uri: null,
      logo_uri: null,
      registration_token_hash: null,
      created_at: at,
      updated_at: at
    })
    yield* store.insertClient(client).pipe(Effect.orDie)
    return new CreatedClient(client)
  })

  /** RFC 7591: a client registers itself; answers its metadata with the registration access token, shown once. */
  const register = fn("Clients.register")(function*(metadata: ClientMetadata) {
    const checked = yield* checkMetadata(metadata, policies.registered)
    const at = yield* now
    const registrationToken = yield* randomToken("svc_rat_v1_")
    const client = new OAuthClient({
      client_id: `cvr_${Encoding.encodeBase64Url(yield* crypto.randomBytes(16))}`,
      kind: "registered",
      name: checked.client_name ?? (parseUrl(checked.redirect_uris[0]!)?.host || "Unnamed application"),
      redirect_uris: checked.redirect_uris,
      scope: checked.scope,
      client_uri: checked.client_uri,
      logo_uri: checked.logo_uri,
      registration_token_hash: yield* crypto.sha256(registrationToken),
      created_at: at,
      updated_at: at
    })
    yield* store.insertClient(client).pipe(Effect.orDie)
    return registeredView(client, policies.registered, registrationToken)
  })

  /** The registered client the registration access token manages (RFC 7592 3: invalid_token otherwise, whatever the cause). */
  const managed = (clientId: string, registrationToken: string) =>
    Effect.gen(function*() {
      const denied = OAuthError.of("invalid_token", "the registration access token is not valid for this client")
      const found = yield* store.getClient(clientId)
      const hash = yield* crypto.sha256(registrationToken)
      if (Option.isNone(found) || found.value.registration_token_hash === null ||
        !crypto.timingSafeEqual(found.value.registration_token_hash, hash)) {
        return yield* Effect.fail(denied)
      }
      return found.value
    })

  const read = fn("Clients.read")(function*(clientId: string, registrationToken: string) {
    return registeredView(yield* managed(clientId, registrationToken), policies.registered)
  })

  /** RFC 7592 2.2: the client's metadata replaced by the request's (client_id must be the client's). */
  const update = fn("Clients.update")(function*(clientId: string, registrationToken: string, metadata: ClientMetadata) {
    const client = yield* managed(clientId, registrationToken)
    if (metadata.client_id !== clientId) {
      return yield* Effect.fail(metadataError("client_id in the body must be the client's own"))
    }
    const checked = yield* checkMetadata(metadata, policies.registered)
    const updated = new OAuthClient({
      ...client,
      name: checked.client_name ?? client.name,
      redirect_uris: checked.redirect_uris,
      scope: checked.scope,
      client_uri: checked.client_uri,
      logo_uri: checked.logo_uri,
      updated_at: yield* now
    })
    yield* store.updateClient(updated)
    return registeredView(updated, policies.registered)
  })

  /** Revokes every grant of the client (its tokens stop working), then deletes the client. */
  const remove = fn("Clients.remove")(function*(clientId: string, registrationToken: string) {
    yield* managed(clientId, registrationToken)
    yield* transactor.withTransaction(Effect.gen(function*() {
      const at = yield* now
      for (const id of yield* store.clientCredentials(clientId)) yield* credentials.revoke(id, at)
      yield* store.deleteClient(clientId)
    }))
  })

  return { find, createFirstParty, register, read, update, remove } as const
})

export class Clients extends Context.Tag("@convene/core/Clients")<Clients, Effect.Effect.Success<ReturnType<typeof make>>>() {
  /** The registry with the given policy for each kind of client. */
  static readonly layerFor = (
    policies: typeof firstPartyClients
  ): Layer.Layer<Clients, never, OAuthStore | CredentialStore | Crypto | Transactor> => Layer.effect(Clients, make(policies))

  /** The first-party server's clients (`firstPartyClients`). */
  static readonly layer = Clients.layerFor(firstPartyClients)
}
