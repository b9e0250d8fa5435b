/** The host: health, OpenAPI and docs, the failure envelope for unknown routes, wrong methods and bad bodies, request ids. */
import { describe, expect, it } from "vitest"
import { client } from "../support/server.js"
import { expectError, expectValidation, member, useServer, UUID, V1_ENDPOINTS } from "./fixtures.js"

const server = useServer()

describe("GET /healthz", () => {
  it("answers 200 {status: ok} without authentication", async () => {
    const response = await client(server.url).get("/healthz")
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toContain("application/json")
    expect(response.body).toEqual({ status: "ok" })
    expect(response.headers.get("x-request-id")).toMatch(UUID)
  })
})

describe("GET /v1/openapi.json and /docs", () => {
  it("serves a JSON OpenAPI document with a path for every /v1 operation, and none of the operator's", async () => {
    const response = await client(server.url).get("/v1/openapi.json")
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toContain("application/json")
    const document = JSON.parse(response.text)
    expect(typeof document.openapi).toBe("string")
    expect(document.info.version).toBe("1.3.0")
    for (const endpoint of V1_ENDPOINTS) {
      expect(document.paths, `${endpoint.method} ${endpoint.template}`).toHaveProperty([endpoint.template, endpoint.method.toLowerCase()])
    }
    expect(Object.keys(document.paths)).toContain("/healthz")
    // The operator API is described apart, to the operator only (documents.test.ts).
    expect(Object.keys(document.paths).filter((path) => path.startsWith("/operator"))).toEqual([])
  })

  it("serves the docs as HTML", async () => {
    const response = await client(server.url).get("/docs")
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toContain("text/html")
    expect(response.text.toLowerCase()).toContain("<html")
  })
})

describe("failure envelope", () => {
  it("answers an unknown route with 404 not_found", async () => {
    const { api } = await member(server.url)
    expectError(await api.get("/v1/no-such-thing"), 404, "not_found")
    expectError(await client(server.url).get("/nowhere"), 404, "not_found")
  })

  it("answers a wrong method on a known path with 405 and an Allow header", async () => {
    const { api } = await member(server.url)
    const put = await api.put("/v1/meetings", { title: "x" })
    expect(put.status).toBe(405)
    expect(put.body.request_id).toBe(put.headers.get("x-request-id"))
    expect(put.body.message).toBe(put.body.error)
    expect((put.headers.get("allow") ?? "").split(/,\s*/).sort()).toEqual(["GET", "POST"])
    const del = await api.delete("/v1/meeting-templates")
    expect(del.status).toBe(405)
    expect(del.headers.get("allow")).toBe("GET")
    const post = await api.post(`/v1/action-items/${crypto.randomUUID()}`, {})
    expect(post.status).toBe(405)
    expect((post.headers.get("allow") ?? "").split(/,\s*/).sort()).toEqual(["DELETE", "GET", "PATCH"])
  })

  it("answers malformed JSON with 400 bad_request", async () => {
    const { api } = await member(server.url)
    expectError(await api.post("/v1/meetings", "{\"title\": "), 400, "bad_request")
    expectError(await api.post("/v1/action-items", "not json at all"), 400, "bad_request")
    const meetings = await api.get("/v1/meetings")
    expect(meetings.body.total).toBe(0)
  })

  it("answers a body over 1 MiB with 413 payload_too_large, and creates nothing", async () => {
    const { api } = await member(server.url)
    const big = JSON.stringify({ title: "x", description: "y".repeat(1024 * 1024) })
    expectError(await api.post("/v1/meetings", big), 413, "payload_too_large")
    const fits = await api.post("/v1/meetings", JSON.stringify({ title: "x".repeat(500) }))
    expect(fits.status).toBe(201)
    expect((await api.get("/v1/meetings")).body.total).toBe(1)
  })

  it("answers a validation failure with 400 validation_error naming the field", async () => {
    const { api } = await member(server.url)
    expectValidation(await api.post("/v1/meetings", {}), "title")
    expectValidation(await api.post("/v1/meetings", { title: "x", detail_level: "verbose" }), "detail_level")
    expectValidation(await api.post("/v1/meetings", { title: "x", start_time: "tomorrow" }), "start_time")
    expectValidation(await api.get("/v1/meetings?status=paused"), "status")
    expectValidation(await api.get("/v1/meetings/not-a-uuid"), "id")
  })

  it("sends X-Request-Id on every response, unique per request, equal to request_id in error bodies", async () => {
    const { api } = await member(server.url)
    const responses = [
      await client(server.url).get("/healthz"),
      await api.get("/v1/meetings"),
      await api.post("/v1/meetings", { title: "x" }),
      await api.get(`/v1/meetings/${crypto.randomUUID()}`),
      await client(server.url).get("/v1/meetings"),
      await api.get("/v1/nowhere"),
      await api.put("/v1/meetings", {})
    ]
    const ids = responses.map((r) => r.headers.get("x-request-id"))
    for (const id of ids) expect(id).toMatch(/\S+/)
    expect(new Set(ids).size).toBe(ids.length)
    for (const r of responses.filter((r) => r.status >= 400)) expect(r.body.request_id).toBe(r.headers.get("x-request-id"))
  })
})

