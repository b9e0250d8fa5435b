/**
 * Partner apps end to end on a real socket (issue 12, first part): the operator's endpoints (create with the secrets
 * shown once, list, get, change, connect workspaces), the partner admin API's authentication with every code of the
 * document, its two routes, the partner envelope on every failure of /v1/partner, the separation of the admin key
 * and first-party tokens in both directions, workspace deletion taking the connections along, and no secret in a
 * log line.
 */
import * as StoreMemory from "@convene/store-memory"
import { describe, expect, it } from "vitest"
import { client, OPERATOR_TOKEN, startServer } from "../support/server.js"
import {
  expectError,
  expectList,
  expectPartnerError,
  expectValidation,
  operator,
  TIMESTAMP,
  useServer,
  UUID,
  workspace
} from "./fixtures.js"

const server = useServer()

/** A public address the outbound rules let through without DNS (an IP literal). */
const HOOK = "https://93.184.215.14/convene-hooks"

interface CreatedApp {
  readonly id: string
  readonly slug: string
  readonly client_id: string
  readonly api_key: string
  readonly client_secret: string
}

const createApp = async (url: string, body: Record<string, unknown> = {}): Promise<CreatedApp> => {
  const response = await operator(url).post("/operator/v1/partner-apps", { name: "Acme Notes", ...body })
  if (response.status !== 201) throw new Error(`partner app creation failed: ${response.status} ${response.text}`)
  return response.body
}

/** A client of the admin API with the app's headers (or those given). */
const admin = (url: string, headers: Record<string, string>) => ({
  get: (path: string) => client(url).get(path, headers)
})

const asApp = (url: string, app: CreatedApp) => admin(url, { "x-api-key": app.api_key, "x-client-id": app.client_id })

/** The partner envelope `{error, code, request_id}` with the status and code, and nothing else. */
const VIEW_KEYS = [
  "client_id", "co_brand_logo_url", "co_brand_name", "created_at", "id", "name", "redirect_uris", "slug", "status",
  "updated_at", "webhook_enabled", "webhook_events", "webhook_url"
]

describe("POST /operator/v1/partner-apps", () => {
  it("creates an active app: 201 with the view, the client id, and the API key and client secret shown this once", async () => {
    const response = await operator(server.url).post("/operator/v1/partner-apps", {
      name: "Acme Notes",
      slug: `acme-${crypto.randomUUID().slice(0, 8)}`,
      webhook_url: HOOK,
      co_brand_name: "Acme",
      co_brand_logo_url: "https://cdn.acme.example/logo.png",
      redirect_uris: ["https://acme.example/oauth/callback", "http://127.0.0.1:9000/cb"]
    })
    expect(response.status).toBe(201)
    expect(Object.keys(response.body).sort()).toEqual([...VIEW_KEYS, "api_key", "client_secret", "webhook_secret"].sort())
    expect(response.body).toMatchObject({
      name: "Acme Notes",
      status: "active",
      webhook_enabled: true,
      webhook_url: HOOK,
      co_brand_name: "Acme",
      co_brand_logo_url: "https://cdn.acme.example/logo.png",
      redirect_uris: ["https://acme.example/oauth/callback", "http://127.0.0.1:9000/cb"]
    })
    expect(response.body.id).toMatch(UUID)
    expect(response.body.created_at).toMatch(TIMESTAMP)
    expect(response.body.client_id).toMatch(/^cvp_/)
    expect(response.body.api_key).toMatch(/^svc_pak_v1_[A-Za-z0-9_-]{43}$/)
    expect(response.body.client_secret).toMatch(/^svc_pcs_v1_[A-Za-z0-9_-]{43}$/)
    expect(response.body.webhook_secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/)

    // Never again: not in the app, not in the list.
    const got = await operator(server.url).get(`/operator/v1/partner-apps/${response.body.id}`)
    expect(got.status).toBe(200)
    expect(Object.keys(got.body).sort()).toEqual(VIEW_KEYS)
    const listed = await operator(server.url).get("/operator/v1/partner-apps?limit=100")
    for (const text of [got.text, listed.text]) {
      expect(text).not.toContain(response.body.api_key)
      expect(text).not.toContain(response.body.client_secret)
      expect(text).not.toContain(response.body.webhook_secret)
    }
    const own = await asApp(server.url, response.body).get("/v1/partner/admin/app")
    expect(own.status).toBe(200)
    expect(own.text).not.toContain(response.body.api_key)
    expect(own.text).not.toContain(response.body.client_secret)
  })

  it("derives the slug from the name when none is given, with a suffix when it is taken; a given slug that is taken is 409", async () => {
    const name = `Ça Marche ${crypto.randomUUID().slice(0, 6)}`
    const first = await createApp(server.url, { name })
    const second = await createApp(server.url, { name })
    expect(first.slug).toMatch(/^ca-marche-[0-9a-f]{6}$/)
    expect(second.slug).toBe(`${first.slug}-2`)
    expectError(await operator(server.url).post("/operator/v1/partner-apps", { name: "Other", slug: first.slug }), 409, "conflict")
  })

  it("answers 400 validation_error naming the field for bad input, and creates nothing", async () => {
    const op = operator(server.url)
    const before = (await op.get("/operator/v1/partner-apps")).body.total
    expectValidation(await op.post("/operator/v1/partner-apps", {}), "name")
    expectValidation(await op.post("/operator/v1/partner-apps", { name: "x".repeat(201) }), "name")
    expectValidation(await op.post("/operator/v1/partner-apps", { name: 42 }), "name")
    expectValidation(await op.post("/operator/v1/partner-apps", { name: "A", slug: "Not A Slug" }), "slug")
    expectValidation(await op.post("/operator/v1/partner-apps", { name: "A", slug: "-edge" }), "slug")
    expectValidation(await op.post("/operator/v1/partner-apps", { name: "A", slug: "a".repeat(64) }), "slug")
    expectValidation(await op.post("/operator/v1/partner-apps", { name: "A", webhook_url: "http://93.184.215.14/x" }), "webhook_url")
    // The outbound rules: a loopback host is refused at creation.
    expectValidation(await op.post("/operator/v1/partner-apps", { name: "A", webhook_url: "https://127.0.0.1/x" }), "webhook_url")
    expectValidation(await op.post("/operator/v1/partner-apps", { name: "A", webhook_url: `https://a.example/${"x".repeat(2001)}` }), "webhook_url")
    expectValidation(await op.post("/operator/v1/partner-apps", { name: "A", co_brand_logo_url: "ftp://cdn.example/logo" }), "co_brand_logo_url")
    expectValidation(await op.post("/operator/v1/partner-apps", { name: "A", co_brand_name: "" }), "co_brand_name")
    expectValidation(await op.post("/operator/v1/partner-apps", { name: "A", redirect_uris: "https://a.example/cb" }), "redirect_uris")
    expectValidation(
      await op.post("/operator/v1/partner-apps", { name: "A", redirect_uris: Array.from({ length: 21 }, (_, i) => `https://a.example/${i}`) }),
      "redirect_uris"
    )
    expectValidation(await op.post("/operator/v1/partner-apps", { name: "A", redirect_uris: ["http://a.example/cb"] }), "redirect_uris[0]")
    expectValidation(await op.post("/operator/v1/partner-apps", { name: "A", api_key: "mine" }), "api_key")
    expectValidation(await op.post("/operator/v1/partner-apps", { name: "A\u0000B" }), "name")
    expectError(await op.post("/operator/v1/partner-apps", "{\"name\": "), 400, "bad_request")
    expectError(await op.post("/operator/v1/partner-apps", "[1,2]"), 400, "validation_error")
    expectError(await client(server.url).post("/operator/v1/partner-apps", { name: "A" }), 401, "unauthorized")
    expectError(await client(server.url, "svc_pak_v1_x").post("/operator/v1/partner-apps", { name: "A" }), 401, "invalid_token")
    expect((await op.get("/operator/v1/partner-apps")).body.total).toBe(before)
  })
})

describe("GET and PATCH /operator/v1/partner-apps", () => {
  it("lists newest first in the list envelope, and gets one; 404 for an unknown id, 400 for a malformed one", async () => {
    const a = await createApp(server.url)
    // Another millisecond: newest first is by created_at (an id breaks ties).
    await new Promise((resolve) => setTimeout(resolve, 5))
    const b = await createApp(server.url)
    const page = await operator(server.url).get("/operator/v1/partner-apps?limit=2")
    expectList(page, { total: page.body.total, limit: 2 })
    expect(page.body.items.map((item: { id: string }) => item.id)).toEqual([b.id, a.id])
    expectError(await operator(server.url).get(`/operator/v1/partner-apps/${crypto.randomUUID()}`), 404, "not_found")
    expectValidation(await operator(server.url).get("/operator/v1/partner-apps/not-a-uuid"), "id")
    expectValidation(await operator(server.url).get("/operator/v1/partner-apps?limit=ten"), "limit")
  })

  it("changes what the request names, clears with null, keeps the rest; 404 unknown; 400 bad values", async () => {
    const app = await createApp(server.url, { webhook_url: HOOK, co_brand_name: "Acme" })
    const op = operator(server.url)
    const changed = await op.patch(`/operator/v1/partner-apps/${app.id}`, { name: "Acme Two", webhook_url: null })
    expect(changed.status).toBe(200)
    expect(changed.body).toMatchObject({
      name: "Acme Two",
      webhook_url: null,
      webhook_enabled: false,
      co_brand_name: "Acme",
      slug: app.slug,
      client_id: app.client_id,
      status: "active"
    })
    expect(Object.keys(changed.body).sort()).toEqual(VIEW_KEYS)
    expectError(await op.patch(`/operator/v1/partner-apps/${crypto.randomUUID()}`, { name: "x" }), 404, "not_found")
    expectValidation(await op.patch(`/operator/v1/partner-apps/${app.id}`, { status: "paused" }), "status")
    expectValidation(await op.patch(`/operator/v1/partner-apps/${app.id}`, { slug: "new-slug" }), "slug")
    expectValidation(await op.patch(`/operator/v1/partner-apps/${app.id}`, { webhook_url: "https://127.0.0.1/x" }), "webhook_url")
    expectValidation(await op.patch(`/operator/v1/partner-apps/${app.id}`, { name: true }), "name")
    expect((await op.get(`/operator/v1/partner-apps/${app.id}`)).body).toMatchObject({ name: "Acme Two", webhook_url: null })
  })
})

describe("POST /operator/v1/partner-apps/{id}/workspaces", () => {
  it("connects a workspace: 201 {id, name, plan, connected_at}; again: the same first connected_at; 404 for unknown ids", async () => {
    const app = await createApp(server.url)
    const ws = await workspace(server.url, "ELITE")
    const op = operator(server.url)
    const first = await op.post(`/operator/v1/partner-apps/${app.id}/workspaces`, { workspace_id: ws.workspaceId })
    expect(first.status).toBe(201)
    expect(Object.keys(first.body).sort()).toEqual(["connected_at", "id", "name", "plan"])
    expect(first.body).toMatchObject({ id: ws.workspaceId, plan: "ELITE" })
    expect(first.body.connected_at).toMatch(TIMESTAMP)
    const again = await op.post(`/operator/v1/partner-apps/${app.id}/workspaces`, { workspace_id: ws.workspaceId.toUpperCase() })
    expect(again.status).toBe(201)
    expect(again.body).toEqual(first.body)
    expectError(await op.post(`/operator/v1/partner-apps/${crypto.randomUUID()}/workspaces`, { workspace_id: ws.workspaceId }), 404, "not_found")
    expectError(await op.post(`/operator/v1/partner-apps/${app.id}/workspaces`, { workspace_id: crypto.randomUUID() }), 404, "not_found")
    expectValidation(await op.post(`/operator/v1/partner-apps/${app.id}/workspaces`, { workspace_id: "nope" }), "workspace_id")
    expectValidation(await op.post(`/operator/v1/partner-apps/${app.id}/workspaces`, {}), "workspace_id")
    const listed = await asApp(server.url, app).get("/v1/partner/admin/workspaces")
    expectList(listed, { total: 1 })
    expect(listed.body.items).toEqual([first.body])
  })
})

describe("partner admin authentication (X-API-Key, X-Client-ID)", () => {
  const routes = ["/v1/partner/admin/app", "/v1/partner/admin/workspaces"]

  it("answers every code of the document, in the partner envelope, on both routes", async () => {
    const app = await createApp(server.url)
    const other = await createApp(server.url)
    for (const path of routes) {
      expectPartnerError(await admin(server.url, {}).get(path), 401, "missing_api_key")
      expectPartnerError(await admin(server.url, { "x-client-id": app.client_id }).get(path), 401, "missing_api_key")
      expectPartnerError(await admin(server.url, { "x-api-key": "", "x-client-id": app.client_id }).get(path), 401, "missing_api_key")
      expectPartnerError(await admin(server.url, { "x-api-key": app.api_key }).get(path), 401, "missing_client_id")
      expectPartnerError(await admin(server.url, { "x-api-key": app.api_key, "x-client-id": "cvp_unknown" }).get(path), 401, "invalid_credentials")
      expectPartnerError(await admin(server.url, { "x-api-key": other.api_key, "x-client-id": app.client_id }).get(path), 401, "invalid_credentials")
      expectPartnerError(await admin(server.url, { "x-api-key": app.client_secret, "x-client-id": app.client_id }).get(path), 401, "invalid_credentials")
      expectPartnerError(await admin(server.url, { "x-api-key": app.api_key, "x-client-id": "x".repeat(4000) }).get(path), 401, "invalid_credentials")
      expect((await asApp(server.url, app).get(path)).status).toBe(200)
    }
    // No refusal says which of the two was wrong, nor echoes them.
    const wrong = await admin(server.url, { "x-api-key": "svc_pak_v1_guess", "x-client-id": app.client_id }).get(routes[0]!)
    expect(wrong.text).not.toContain(app.client_id)
    expect(wrong.text).not.toContain("svc_pak_v1_guess")
  })

  it("refuses a suspended app on both routes with 403 partner_app_inactive (a wrong key still 401), until it is active again", async () => {
    const app = await createApp(server.url)
    const op = operator(server.url)
    expect((await op.patch(`/operator/v1/partner-apps/${app.id}`, { status: "suspended" })).status).toBe(200)
    for (const path of routes) {
      expectPartnerError(await asApp(server.url, app).get(path), 403, "partner_app_inactive")
      expectPartnerError(await admin(server.url, { "x-api-key": `${app.api_key}x`, "x-client-id": app.client_id }).get(path), 401, "invalid_credentials")
    }
    expect((await op.patch(`/operator/v1/partner-apps/${app.id}`, { status: "active" })).status).toBe(200)
    for (const path of routes) expect((await asApp(server.url, app).get(path)).status).toBe(200)
  })

  it("a first-party token is no credential on the admin routes, and the API key none on /v1", async () => {
    const app = await createApp(server.url)
    const ws = await workspace(server.url)
    const user = await ws.addUser({ role: "OWNER" })
    const key = await ws.addApiKey()
    for (const path of routes) {
      expectPartnerError(await client(server.url, user.token).get(path), 401, "missing_api_key")
      expectPartnerError(await client(server.url, key.key).get(path), 401, "missing_api_key")
      // The bearer token sent as the API key is just a wrong key.
      expectPartnerError(await admin(server.url, { "x-api-key": user.token, "x-client-id": app.client_id }).get(path), 401, "invalid_credentials")
      expectPartnerError(await client(server.url, OPERATOR_TOKEN).get(path), 401, "missing_api_key")
    }
    expectError(await client(server.url, app.api_key).get("/v1/me"), 401, "invalid_token")
    expectError(await client(server.url).get("/v1/me", { "x-api-key": app.api_key, "x-client-id": app.client_id }), 401, "unauthorized")
    expectError(await client(server.url, app.client_secret).get("/v1/meetings"), 401, "invalid_token")
    expect((await user.api.get("/v1/me")).status).toBe(200)
  })
})

describe("GET /v1/partner/admin/app and /workspaces", () => {
  it("answer the app itself and its connected workspaces, newest connection first, paged, another app's never", async () => {
    const app = await createApp(server.url, { co_brand_name: "Acme" })
    const other = await createApp(server.url)
    const op = operator(server.url)
    const own = await asApp(server.url, app).get("/v1/partner/admin/app")
    expect(own.status).toBe(200)
    expect(own.body).toEqual((await op.get(`/operator/v1/partner-apps/${app.id}`)).body)
    const spaces = [await workspace(server.url, "FREE"), await workspace(server.url, "PRO"), await workspace(server.url, "ENTERPRISE")]
    for (const ws of spaces) {
      expect((await op.post(`/operator/v1/partner-apps/${app.id}/workspaces`, { workspace_id: ws.workspaceId })).status).toBe(201)
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    expect((await op.post(`/operator/v1/partner-apps/${other.id}/workspaces`, { workspace_id: spaces[0]!.workspaceId })).status).toBe(201)
    const listed = await asApp(server.url, app).get("/v1/partner/admin/workspaces")
    expectList(listed, { total: 3 })
    expect(listed.body.items.map((item: { id: string }) => item.id)).toEqual(spaces.map((ws) => ws.workspaceId).reverse())
    expect(listed.body.items.map((item: { plan: string }) => item.plan)).toEqual(["ENTERPRISE", "PRO", "FREE"])
    const page = await asApp(server.url, app).get("/v1/partner/admin/workspaces?limit=1&offset=1")
    expectList(page, { total: 3, limit: 1, offset: 1 })
    expect(page.body.items.map((item: { id: string }) => item.id)).toEqual([spaces[1]!.workspaceId])
    const clamped = await asApp(server.url, app).get("/v1/partner/admin/workspaces?limit=1000&offset=-4")
    expectList(clamped, { total: 3, limit: 100, offset: 0 })
    const theirs = await asApp(server.url, other).get("/v1/partner/admin/workspaces")
    expectList(theirs, { total: 1 })
  })

  it("deleting a workspace removes its connection from every app's list", async () => {
    const app = await createApp(server.url)
    const kept = await workspace(server.url)
    const gone = await workspace(server.url)
    const op = operator(server.url)
    for (const ws of [kept, gone]) await op.post(`/operator/v1/partner-apps/${app.id}/workspaces`, { workspace_id: ws.workspaceId })
    expect((await op.delete(`/operator/v1/workspaces/${gone.workspaceId}`)).status).toBe(204)
    const listed = await asApp(server.url, app).get("/v1/partner/admin/workspaces")
    expectList(listed, { total: 1 })
    expect(listed.body.items.map((item: { id: string }) => item.id)).toEqual([kept.workspaceId])
    expectError(await op.post(`/operator/v1/partner-apps/${app.id}/workspaces`, { workspace_id: gone.workspaceId }), 404, "not_found")
  })

  it("answers bad input and unknown paths under /v1/partner in the partner envelope, never 500", async () => {
    const app = await createApp(server.url)
    const api = asApp(server.url, app)
    const invalid = await api.get("/v1/partner/admin/workspaces?limit=ten")
    expectPartnerError(invalid, 400, "invalid_request")
    expect(invalid.body.error).toContain("limit")
    expectPartnerError(await api.get("/v1/partner/admin/workspaces?offset=1.5"), 400, "invalid_request")
    expectPartnerError(await api.get("/v1/partner/admin/workspaces?limit=1&limit=2"), 400, "invalid_request")
    expectPartnerError(await api.get("/v1/partner/admin/nope"), 404, "not_found")
    expectPartnerError(await api.get("/v1/partner/admin/app/"), 404, "not_found")
    expectPartnerError(await api.get("/v1/partner/user/nope"), 404, "not_found")
    // The admin key is no credential in the user context.
    expectPartnerError(await api.get("/v1/partner/user/meetings"), 401, "missing_authorization")
    expectPartnerError(await api.get("/v1/partner"), 404, "not_found")
    const headers = { "x-api-key": app.api_key, "x-client-id": app.client_id }
    const posted = await client(server.url).post("/v1/partner/admin/app", { name: "x" }, headers)
    expectPartnerError(posted, 405, "method_not_allowed")
    expect(posted.headers.get("allow")).toBe("GET")
    const notJson = await client(server.url).post("/v1/partner/admin/workspaces", "{not json", headers)
    expectPartnerError(notJson, 405, "method_not_allowed")
    // Outside /v1/partner, the first-party envelope as before.
    expectError(await client(server.url).get("/v1/partnerx"), 404, "not_found")
  })
})

describe("the OpenAPI document", () => {
  it("describes the admin routes with the partner security schemes and envelopes, and the operator routes in the operator's", async () => {
    const doc = (await client(server.url).get("/v1/openapi.json")).body
    expect(doc.components.securitySchemes.partnerApiKey).toMatchObject({ type: "apiKey", in: "header", name: "X-API-Key" })
    expect(doc.components.securitySchemes.partnerClientId).toMatchObject({ type: "apiKey", in: "header", name: "X-Client-ID" })
    for (const path of ["/v1/partner/admin/app", "/v1/partner/admin/workspaces"]) {
      const operation = doc.paths[path].get
      expect(operation.security).toEqual([{ partnerApiKey: [], partnerClientId: [] }])
      expect(Object.keys(operation.responses).sort()).toEqual(path.endsWith("app") ? ["200", "401", "403", "429"] : ["200", "400", "401", "403", "429"])
      expect(JSON.stringify(operation.responses["401"])).toContain("PartnerCredentialsRefused")
      expect(JSON.stringify(operation.responses)).not.toContain("ValidationFailed")
    }
    const unauthorized = doc.components.schemas.PartnerCredentialsRefused
    expect(unauthorized.properties.code.enum).toEqual(["missing_api_key", "missing_client_id", "invalid_credentials"])
    expect(Object.keys(unauthorized.properties).sort()).toEqual(["code", "error", "request_id"])
    expect(doc.info.description).toContain("**Partner API.**")
    const operatorDoc = (await operator(server.url).get("/operator/v1/openapi.json")).body
    for (const path of ["/operator/v1/partner-apps", "/operator/v1/partner-apps/{id}", "/operator/v1/partner-apps/{id}/workspaces"]) {
      expect(operatorDoc.paths[path]).toBeDefined()
    }
    expect(operatorDoc.paths["/operator/v1/partner-apps"].post.description).toContain("in this answer only")
    expect(doc.paths["/operator/v1/partner-apps"]).toBeUndefined()
  })
})

describe("secrets and the access log", () => {
  it("no log line holds the API key or the client secret, from creation to use", async () => {
    const lines: Array<string> = []
    const logged = await startServer({ store: StoreMemory.layer, logLines: lines })
    const url = logged.url
    try {
      const app = await createApp(url)
      await asApp(url, app).get("/v1/partner/admin/app")
      await admin(url, { "x-api-key": app.api_key, "x-client-id": "cvp_unknown" }).get("/v1/partner/admin/app")
      await client(url, app.api_key).get("/v1/me")
      await new Promise((resolve) => setTimeout(resolve, 100))
      const requests = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line.msg === "request")
      expect(requests.length).toBeGreaterThanOrEqual(4)
      expect(requests.find((line) => line.route === "/v1/partner/admin/app" && line.status === 200)).toMatchObject({
        credential_kind: "partner_api_key",
        credential_id: app.client_id
      })
      for (const line of lines) {
        expect(line).not.toContain(app.api_key)
        expect(line).not.toContain(app.client_secret)
      }
    } finally {
      await logged.close()
    }
  })
})
