/**
 * The IdP configuration end to end (/v1/partner/admin/idp), on real sockets: every row of the partner document's "IdP
 * operation errors" table, the defaults, partial updates with `is_active`, deletion, and the secret kept encrypted.
 * The identity providers' discovery documents are served by a real HTTPS server on loopback with a certificate of the
 * test's own authority, which the Convene server trusts (NodeOutbound's `ca` in this process, NODE_EXTRA_CA_CERTS for
 * a server process) and may call (CONVENE_OUTBOUND_ALLOW_HOSTS=127.0.0.1). Domain verifications are put through the
 * DomainVerificationStore port of the server's own store. On the PostgreSQL server, the raw row holds no plaintext of
 * the secret; a server process reads CONVENE_SECRETS_KEY (and stops on a bad one without echoing it).
 */
import { type DomainVerification, DomainVerificationStore, type StorePorts } from "@convene/core"
import * as StoreMemory from "@convene/store-memory"
import * as StorePg from "@convene/store-pg"
import { Context, DateTime, Effect, Exit, Layer, Option, Scope } from "effect"
import * as Https from "node:https"
import * as NodeCrypto from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { serverDatabase } from "../../packages/store-pg/test/fixtures.js"
import { startServerProcess } from "../support/process.js"
import { client, type Client, OPERATOR_TOKEN, type RunningServer, startServer } from "../support/server.js"
import { makeTestTls, type TestTls } from "../support/tls.js"
import { domainVerification } from "../support/verifications.js"
import { expectPartnerError, TIMESTAMP, UUID } from "./fixtures.js"

/**
 * @effect/sql's SqlClient, as store-pg's layers provide it (the test package does not depend on @effect/sql: the tag
 * is rebuilt from its key, as test/faults/Snapshot.ts does).
 */
type SqlClient = Exclude<Layer.Layer.Success<ReturnType<typeof StorePg.layerPglite>>, StorePorts>
const SqlClient = Context.GenericTag<SqlClient>("@effect/sql/SqlClient")

/** What the test's identity providers answer, by path: a status and a body (a document is sent as JSON). */
type Served = { readonly status: number; readonly body: string; readonly headers?: Record<string, string> }

let tls: TestTls
let idp: Https.Server
let idpOrigin: string
const served = new Map<string, Served>()

beforeAll(async () => {
  tls = await makeTestTls()
  idp = Https.createServer({ key: tls.keyPem, cert: tls.certPem }, (request, response) => {
    const answer = served.get((request.url ?? "").split("?")[0]!)
    if (answer === undefined) response.writeHead(404, { "content-type": "text/plain" }).end("no such provider")
    else response.writeHead(answer.status, { "content-type": "application/json", ...answer.headers }).end(answer.body)
  })
  await new Promise<void>((resolve) => idp.listen(0, "127.0.0.1", resolve))
  const address = idp.address()
  if (address === null || typeof address === "string") throw new Error("no address")
  idpOrigin = `https://127.0.0.1:${address.port}`
}, 60_000)

afterAll(async () => {
  await new Promise((resolve) => idp?.close(resolve))
  await tls?.cleanup()
})

const suffix = "/.well-known/openid-configuration"

/** A new identity provider at `{idpOrigin}/<name>`: its discovery URL, issuer and (served) document. */
const provider = (overrides: Record<string, unknown> = {}) => {
  const issuer = `${idpOrigin}/tenant-${crypto.randomUUID().slice(0, 8)}`
  const document = {
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    userinfo_endpoint: `${issuer}/userinfo`,
    jwks_uri: `${issuer}/jwks`,
    response_types_supported: ["code"],
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: ["RS256"],
    ...overrides
  }
  const discoveryUrl = `${issuer}${suffix}`
  serve(discoveryUrl, { status: 200, body: JSON.stringify(document) })
  return { issuer, discoveryUrl, document }
}

const serve = (url: string, answer: Served) => {
  served.set(new URL(url).pathname, answer)
}

const RESPONSE_KEYS = [
  "allowed_email_domains",
  "authorization_endpoint",
  "claim_mappings",
  "created_at",
  "discovery_last_fetched_at",
  "discovery_url",
  "id",
  "idp_client_id",
  "is_active",
  "issuer",
  "jwks_uri",
  "mode",
  "name",
  "partner_app_id",
  "scopes",
  "token_endpoint",
  "type",
  "updated_at",
  "userinfo_endpoint"
]

const SECRET = "idp-client-secret-PLAINTEXT-4f1c"
const SECRETS_KEY = NodeCrypto.randomBytes(32).toString("base64")

interface Store {
  readonly name: string
  readonly layer: (scope: Scope.Scope) => Layer.Layer<StorePorts, unknown>
}

/** A running server over a store this file built (so the test reaches the store's ports), and its operator. */
const useIdpServer = (store: Store, options: { readonly secretsKey?: string; readonly logLines?: Array<string> } = {}) => {
  const scope = Effect.runSync(Scope.make())
  const state: { server?: RunningServer; ports?: Context.Context<StorePorts>; operator?: Client } = {}
  beforeAll(async () => {
    state.ports = await Effect.runPromise(Scope.extend(Layer.build(store.layer(scope)), scope)) as Context.Context<StorePorts>
    state.server = await startServer({
      store: Layer.succeedContext(state.ports),
      outbound: { allowHosts: ["127.0.0.1"], ca: [tls.caPem], smtpUrl: Option.none(), mailFrom: Option.none() },
      ...(options.secretsKey === undefined ? {} : { secretsKey: options.secretsKey }),
      ...(options.logLines === undefined ? {} : { logLines: options.logLines })
    })
    state.operator = client(state.server.url, OPERATOR_TOKEN)
  }, 120_000)
  afterAll(async () => {
    await state.server?.close()
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }, 60_000)

  /** A new partner app: its admin client (X-API-Key, X-Client-ID), its record and secrets. */
  const newApp = async () => {
    const app = (await state.operator!.post("/operator/v1/partner-apps", { name: `Acme ${crypto.randomUUID().slice(0, 6)}` })).body
    const headers = { "x-api-key": app.api_key as string, "x-client-id": app.client_id as string }
    const api = client(state.server!.url)
    return {
      app: app as { id: string; client_id: string; client_secret: string; api_key: string },
      post: (body: unknown) => api.post("/v1/partner/admin/idp", body, headers),
      put: (body: unknown) => api.put("/v1/partner/admin/idp", body, headers),
      get: () => api.get("/v1/partner/admin/idp", headers),
      del: () => api.delete("/v1/partner/admin/idp", headers),
      raw: (method: string, body: string, extra: Record<string, string> = {}) =>
        api.call(method, "/v1/partner/admin/idp", body, { ...headers, "content-type": "application/json", ...extra })
    }
  }

  /** Stores the app's verification of `domain` in `status` through the server's store (as the domain room would). */
  const verified = (appId: string, domain: string, status: DomainVerification["status"] = "verified") =>
    Effect.runPromise(Effect.gen(function*() {
      yield* (yield* DomainVerificationStore).put(domainVerification(appId, domain, status, yield* DateTime.now))
    }).pipe(Effect.provide(state.ports!)))

  return { state, newApp, verified, scope }
}

const freshDomain = () => `acme-${crypto.randomUUID().slice(0, 8)}.example.com`

/** A valid create body for a new provider and a verified domain of the app. */
const validBody = async (env: ReturnType<typeof useIdpServer>, appId: string, fields: Record<string, unknown> = {}) => {
  const domain = freshDomain()
  await env.verified(appId, domain)
  const { discoveryUrl, document, issuer } = provider()
  return {
    body: {
      name: "Acme Okta",
      discovery_url: discoveryUrl,
      idp_client_id: "0oa-acme-client",
      idp_client_secret: SECRET,
      mode: "strict",
      allowed_email_domains: [domain],
      ...fields
    },
    domain,
    document,
    issuer
  }
}

describe("IdP configuration (memory)", () => {
  const logLines: Array<string> = []
  const env = useIdpServer({ name: "memory", layer: () => StoreMemory.layer }, { secretsKey: SECRETS_KEY, logLines })

  it("POST creates the configuration (201) with the defaults and the discovered endpoints; GET answers it; the secret is nowhere", async () => {
    const { app, get, post } = await env.newApp()
    const { body, document, domain, issuer } = await validBody(env, app.id, { name: "  Acme Okta  ", allowed_email_domains: [] })
    const { allowed_email_domains: _, ...rest } = body
    void _
    const created = await post({ ...rest, allowed_email_domains: [domain.toUpperCase(), domain] })
    expect(created.status).toBe(201)
    expect(Object.keys(created.body).sort()).toEqual(RESPONSE_KEYS)
    expect(created.body).toMatchObject({
      partner_app_id: app.id,
      name: "Acme Okta",
      type: "oidc",
      discovery_url: body.discovery_url,
      idp_client_id: "0oa-acme-client",
      scopes: ["openid", "email", "profile"],
      claim_mappings: { email: "email", name: "name" },
      mode: "strict",
      allowed_email_domains: [domain],
      is_active: true,
      issuer,
      authorization_endpoint: document.authorization_endpoint,
      token_endpoint: document.token_endpoint,
      userinfo_endpoint: document.userinfo_endpoint,
      jwks_uri: document.jwks_uri
    })
    expect(created.body.id).toMatch(UUID)
    for (const field of ["discovery_last_fetched_at", "created_at", "updated_at"]) expect(created.body[field]).toMatch(TIMESTAMP)
    expect(created.text).not.toContain(SECRET)
    const read = await get()
    expect(read.status).toBe(200)
    expect(read.body).toEqual(created.body)
    expect(logLines.join("\n")).not.toContain(SECRET)
  })

  it("PUT changes what it names (is_active toggles), re-fetches a given discovery URL; DELETE is 204 and for good", async () => {
    const { app, del, get, post, put } = await env.newApp()
    const { body, issuer } = await validBody(env, app.id)
    const created = (await post(body)).body
    const renamed = await put({ name: "Renamed", scopes: ["openid", "email", "groups"], claim_mappings: { email: "upn", given_name: "first" } })
    expect(renamed.status).toBe(200)
    expect(renamed.body).toMatchObject({
      ...created,
      name: "Renamed",
      scopes: ["openid", "email", "groups"],
      claim_mappings: { email: "upn", given_name: "first" },
      updated_at: renamed.body.updated_at
    })
    expect((await put({ is_active: false })).body.is_active).toBe(false)
    expect((await get()).body.is_active).toBe(false)
    expect((await put({ is_active: true })).body.is_active).toBe(true)
    // The same discovery URL again: the document is fetched again (the on-demand refresh).
    serve(body.discovery_url, {
      status: 200,
      body: JSON.stringify({ issuer, authorization_endpoint: `${issuer}/a2`, token_endpoint: `${issuer}/t2`, jwks_uri: `${issuer}/k2` })
    })
    const refreshed = await put({ discovery_url: body.discovery_url })
    expect(refreshed.body).toMatchObject({ authorization_endpoint: `${issuer}/a2`, token_endpoint: `${issuer}/t2`, jwks_uri: `${issuer}/k2`, userinfo_endpoint: null })
    expect(Date.parse(refreshed.body.discovery_last_fetched_at)).toBeGreaterThanOrEqual(Date.parse(created.discovery_last_fetched_at))
    const deleted = await del()
    expect(deleted.status).toBe(204)
    expect(deleted.text).toBe("")
    expectPartnerError(await get(), 404, "idp_config_not_found")
    expectPartnerError(await del(), 404, "idp_config_not_found")
    expectPartnerError(await put({ name: "x" }), 404, "idp_config_not_found")
    expect((await post((await validBody(env, app.id)).body)).status).toBe(201)
  })

  it("400 invalid_request_body names the field: unknown fields, bad values, a body that is not JSON, a refused discovery host", async () => {
    const { app, post, put, raw } = await env.newApp()
    const { body } = await validBody(env, app.id)
    const cases: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
      [{ ...body, type: "oidc" }, "type"],
      [{ ...body, name: "" }, "name"],
      [{ ...body, name: "x".repeat(256) }, "name"],
      [{ ...body, discovery_url: "http://idp.example/.well-known/openid-configuration" }, "discovery_url"],
      [{ ...body, discovery_url: "https://idp.example/oidc" }, "discovery_url"],
      [{ ...body, scopes: ["email", "profile"] }, "scopes"],
      [{ ...body, claim_mappings: { name: "name" } }, "claim_mappings"],
      [{ ...body, claim_mappings: { email: "email", phone: "phone_number" } }, "phone"],
      [{ ...body, mode: "open" }, "mode"],
      [{ ...body, allowed_email_domains: ["not a domain"] }, "allowed_email_domains"],
      [{ ...body, idp_client_secret: undefined }, "idp_client_secret"],
      [{ ...body, discovery_url: `https://localhost:1${suffix}` }, "discovery_url"]
    ]
    for (const [invalid, field] of cases) expectPartnerError(await post(invalid), 400, "invalid_request_body", field)
    expectPartnerError(await raw("POST", "{not json"), 400, "invalid_request_body")
    expectPartnerError(await raw("POST", "[]"), 400, "invalid_request_body")
    await post(body)
    expectPartnerError(await put({ is_active: "yes" }), 400, "invalid_request_body", "is_active")
    expectPartnerError(await put({ client_secret: "x" }), 400, "invalid_request_body", "client_secret")
    // The rest of the partner API keeps its own code.
    const admin = client(env.state.server!.url)
    const other = await admin.post("/v1/partner/admin/automations", { name: "x", extra: 1 }, { "x-api-key": app.api_key, "x-client-id": app.client_id })
    expectPartnerError(other, 400, "invalid_request")
  })

  it("400 invalid_idp_credentials: the partner app's client id, client secret or API key given as the IdP's", async () => {
    const { app, post, put } = await env.newApp()
    const { body } = await validBody(env, app.id)
    expectPartnerError(await post({ ...body, idp_client_id: app.client_id }), 400, "invalid_idp_credentials", "idp_client_id")
    expectPartnerError(await post({ ...body, idp_client_secret: app.client_secret }), 400, "invalid_idp_credentials", "idp_client_secret")
    expectPartnerError(await post({ ...body, idp_client_secret: app.api_key }), 400, "invalid_idp_credentials", "idp_client_secret")
    expect((await post(body)).status).toBe(201)
    expectPartnerError(await put({ idp_client_secret: app.client_secret }), 400, "invalid_idp_credentials")
  })

  it("400 invalid_idp: public consumer identity providers", async () => {
    const { app, post } = await env.newApp()
    const { body } = await validBody(env, app.id)
    for (const url of [
      `https://login.microsoftonline.com/consumers/v2.0${suffix}`,
      `https://login.microsoftonline.com/9188040d-6c67-4c5b-b112-36a304b66dad/v2.0${suffix}`,
      `https://appleid.apple.com${suffix}`,
      `https://www.facebook.com${suffix}`
    ]) expectPartnerError(await post({ ...body, discovery_url: url }), 400, "invalid_idp", "consumer")
    // Google serves Workspace accounts too: usable in strict mode only.
    const google = { ...body, discovery_url: `https://accounts.google.com${suffix}`, mode: "partner_managed", allowed_email_domains: [] }
    expectPartnerError(await post(google), 400, "invalid_idp", "strict mode only")
  })

  it("400 domain_is_generic, strict_mode_requires_domains, domain_not_verified; 409 domain_already_claimed", async () => {
    const { app, post } = await env.newApp()
    const { body } = await validBody(env, app.id)
    expectPartnerError(await post({ ...body, allowed_email_domains: ["gmail.com"] }), 400, "domain_is_generic", "gmail.com")
    expectPartnerError(await post({ ...body, mode: "partner_managed", allowed_email_domains: ["hotmail.com"] }), 400, "domain_is_generic")
    expectPartnerError(await post({ ...body, allowed_email_domains: [] }), 400, "strict_mode_requires_domains")
    expectPartnerError(await post({ ...body, allowed_email_domains: undefined }), 400, "strict_mode_requires_domains")
    const unverified = freshDomain()
    expectPartnerError(await post({ ...body, allowed_email_domains: [unverified] }), 400, "domain_not_verified", unverified)
    const pending = freshDomain()
    await env.verified(app.id, pending, "pending")
    expectPartnerError(await post({ ...body, allowed_email_domains: [pending] }), 400, "domain_not_verified", pending)
    // Held verified by another app; then listed in another app's configuration.
    const other = await env.newApp()
    const held = freshDomain()
    await env.verified(other.app.id, held)
    expectPartnerError(await post({ ...body, allowed_email_domains: [held] }), 409, "domain_already_claimed", held)
    const otherBody = await validBody(env, other.app.id)
    expect((await other.post(otherBody.body)).status).toBe(201)
    await env.verified(other.app.id, otherBody.domain, "revoked")
    await env.verified(app.id, otherBody.domain)
    expectPartnerError(await post({ ...body, allowed_email_domains: [otherBody.domain] }), 409, "domain_already_claimed")
    // partner_managed without domains: the IdP decides.
    expect((await post({ ...body, mode: "partner_managed", allowed_email_domains: [] })).status).toBe(201)
  })

  it("400 discovery_fetch_failed: unreachable, not 2xx, a redirect, too large, not JSON, not OIDC metadata for its URL", async () => {
    const { app, post } = await env.newApp()
    const { body } = await validBody(env, app.id)
    const broken = (answer: (issuer: string) => Served | undefined) => {
      const issuer = `${idpOrigin}/broken-${crypto.randomUUID().slice(0, 8)}`
      const served = answer(issuer)
      if (served !== undefined) serve(`${issuer}${suffix}`, served)
      return `${issuer}${suffix}`
    }
    const metadata = (issuer: string, overrides: Record<string, unknown> = {}) =>
      JSON.stringify({ issuer, authorization_endpoint: `${issuer}/a`, token_endpoint: `${issuer}/t`, jwks_uri: `${issuer}/k`, ...overrides })
    const urls = [
      broken(() => undefined),
      broken(() => ({ status: 500, body: "{}" })),
      broken((issuer) => ({ status: 302, body: "", headers: { location: `${issuer}/elsewhere` } })),
      broken(() => ({ status: 200, body: JSON.stringify({ padding: "x".repeat(70_000) }) })),
      broken(() => ({ status: 200, body: "<html>sign in</html>" })),
      broken((issuer) => ({ status: 200, body: metadata(issuer, { jwks_uri: undefined }) })),
      broken((issuer) => ({ status: 200, body: metadata(issuer, { token_endpoint: "http://127.0.0.1/token" }) })),
      broken((issuer) => ({ status: 200, body: metadata(`${issuer}/other`) })),
      broken((issuer) => ({ status: 200, body: metadata(issuer, { response_types_supported: ["id_token"] }) }))
    ]
    for (const url of urls) expectPartnerError(await post({ ...body, discovery_url: url }), 400, "discovery_fetch_failed")
    expect((await post(body)).status).toBe(201)
  })

  it("401 without valid API credentials; 404 idp_config_not_found; 409 idp_config_exists", async () => {
    const { app, get, post } = await env.newApp()
    const api = client(env.state.server!.url)
    expectPartnerError(await api.get("/v1/partner/admin/idp"), 401, "missing_api_key")
    expectPartnerError(await api.post("/v1/partner/admin/idp", {}, { "x-api-key": "svc_pak_v1_wrong", "x-client-id": app.client_id }), 401, "invalid_credentials")
    expectPartnerError(await get(), 404, "idp_config_not_found")
    const { body } = await validBody(env, app.id)
    expect((await post(body)).status).toBe(201)
    expectPartnerError(await post(body), 409, "idp_config_exists")
  })
})

describe("IdP configuration in the OpenAPI document", () => {
  const env = useIdpServer({ name: "memory", layer: () => StoreMemory.layer })

  it("documents the four operations with the partner envelopes of the IdP error table", async () => {
    const doc = (await client(env.state.server!.url).get("/v1/openapi.json")).body
    const path = doc.paths["/v1/partner/admin/idp"]
    expect(Object.keys(path).sort()).toEqual(["delete", "get", "post", "put"])
    expect(Object.keys(path.post.responses).sort()).toEqual(["201", "400", "401", "403", "404", "409", "413", "415", "429", "503"])
    expect(path.post.responses["400"].description).toContain("invalid_request_body")
    const codesOf = (status: string) => {
      const schema = path.post.responses[status].content["application/json"].schema
      const refs: ReadonlyArray<{ $ref: string }> = schema.anyOf ?? [schema]
      return refs.flatMap((ref) => doc.components.schemas[ref.$ref.split("/").pop()!].properties.code.enum as Array<string>)
    }
    expect(codesOf("400")).toEqual(expect.arrayContaining([
      "invalid_request_body",
      "invalid_idp_credentials",
      "invalid_idp",
      "domain_is_generic",
      "strict_mode_requires_domains",
      "domain_not_verified",
      "discovery_fetch_failed"
    ]))
    expect(codesOf("404")).toEqual(["idp_config_not_found"])
    expect(codesOf("409")).toEqual(["idp_config_exists", "domain_already_claimed"])
    expect(codesOf("503")).toEqual(["secrets_key_not_configured"])
    expect(path.delete.responses["204"]).toBeDefined()
  })
})

describe("IdP configuration without CONVENE_SECRETS_KEY", () => {
  const env = useIdpServer({ name: "memory", layer: () => StoreMemory.layer })

  it("create is 503 secrets_key_not_configured naming the variable; the other operations answer as usual", async () => {
    const { app, get, post } = await env.newApp()
    const { body } = await validBody(env, app.id)
    expectPartnerError(await post(body), 503, "secrets_key_not_configured", "CONVENE_SECRETS_KEY")
    expectPartnerError(await get(), 404, "idp_config_not_found")
  })
})

describe("IdP configuration (PostgreSQL)", () => {
  const env = useIdpServer({
    name: "PostgreSQL",
    layer: (scope) => Layer.unwrapEffect(Effect.map(Scope.extend(serverDatabase, scope), (url) => StorePg.layerPg({ url })))
  }, { secretsKey: SECRETS_KEY })

  it("the stored row holds the secret only encrypted; the configuration reads back, changes and goes", async () => {
    const { app, del, get, post, put } = await env.newApp()
    const { body } = await validBody(env, app.id, { claim_mappings: { email: "mail", family_name: "sn" } })
    const created = await post(body)
    expect(created.status).toBe(201)
    expect((await get()).body).toEqual(created.body)
    const rows = await Effect.runPromise(
      Effect.flatMap(SqlClient, (sql) => sql<Record<string, unknown>>`SELECT * FROM partner_idp_configs WHERE partner_app_id = ${app.id}`)
        // The store was built by layerPg, which provides the SqlClient beside the ports.
        .pipe(Effect.provide(env.state.ports! as unknown as Context.Context<SqlClient>))
    )
    expect(rows).toHaveLength(1)
    const row = JSON.stringify(rows[0])
    expect(row).not.toContain(SECRET)
    expect(row).not.toContain(Buffer.from(SECRET).toString("base64"))
    expect(row).not.toContain(Buffer.from(SECRET).toString("hex"))
    expect(String(rows[0]!["sealed_client_secret"])).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/)
    expect((await put({ name: "Renamed", idp_client_secret: "another-secret-value" })).body.name).toBe("Renamed")
    expect((await del()).status).toBe(204)
    expectPartnerError(await get(), 404, "idp_config_not_found")
  })
})

describe("a server process", () => {
  it("reads CONVENE_SECRETS_KEY and trusts NODE_EXTRA_CA_CERTS for the discovery document", async () => {
    const server = await startServerProcess({
      CONVENE_STORE: "memory",
      CONVENE_SECRETS_KEY: `new:${NodeCrypto.randomBytes(32).toString("base64")},old:${SECRETS_KEY}`,
      CONVENE_OUTBOUND_ALLOW_HOSTS: "127.0.0.1",
      NODE_EXTRA_CA_CERTS: tls.caFile
    })
    try {
      const operator = client(server.url, OPERATOR_TOKEN)
      const app = (await operator.post("/operator/v1/partner-apps", { name: "Process app" })).body
      const headers = { "x-api-key": app.api_key, "x-client-id": app.client_id }
      const { discoveryUrl } = provider()
      const created = await client(server.url).post("/v1/partner/admin/idp", {
        name: "Process IdP",
        discovery_url: discoveryUrl,
        idp_client_id: "client",
        idp_client_secret: SECRET,
        mode: "partner_managed"
      }, headers)
      expect(created.status).toBe(201)
      expect(server.output()).not.toContain(SECRET)
      expect(server.output()).toContain(`"partner_sso":"on"`)
    } finally {
      await server.stop()
    }
  }, 120_000)

  it("stops at start on a CONVENE_SECRETS_KEY that does not parse, naming the variable and never echoing it", async () => {
    const bad = NodeCrypto.randomBytes(16).toString("base64")
    const started = await startServerProcess({ CONVENE_STORE: "memory", CONVENE_SECRETS_KEY: bad }).then(
      async (process) => {
        await process.stop()
        return "started"
      },
      (error: Error) => error.message
    )
    expect(started).toContain("the server exited with 1")
    expect(started).toContain("CONVENE_SECRETS_KEY")
    expect(started).not.toContain(bad)
  }, 120_000)
})
