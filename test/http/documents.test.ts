/**
 * The documents the server serves beside the API (http/Documents.ts): the public OpenAPI document without the
 * operator's paths, whether the operator API is on or off; the operator's own document, behind the operator
 * token and absent when the operator API is off; and the reference page's own assets, from the server itself.
 */
import { HttpApi } from "@effect/platform"
import { Api } from "@convene/http"
import { describe, expect, it } from "vitest"
import { client, OPERATOR_TOKEN } from "../support/server.js"
import { expectError, useServer } from "./fixtures.js"

interface Document {
  readonly info: { readonly title: string; readonly license?: unknown }
  readonly servers?: ReadonlyArray<{ readonly url: string }>
  readonly tags: ReadonlyArray<{ readonly name: string; readonly description?: string }>
  readonly paths: Record<string, Record<string, { readonly summary?: string; readonly description?: string }>>
}

/** The routes of the contract's operator group, as OpenAPI writes paths (`{id}` for `:id`). */
const operatorRoutes = (() => {
  const routes: Array<string> = []
  HttpApi.reflect(Api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group }) => {
      if (group.identifier === "operator") routes.push(`${endpoint.method} ${endpoint.path.replace(/:(\w+)/g, "{$1}")}`)
    }
  })
  return routes.sort()
})()

const routesOf = (document: Document) =>
  Object.entries(document.paths).flatMap(([path, operations]) =>
    Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`)
  ).sort()

const publicDocument = async (url: string) => {
  const response = await client(url).get("/v1/openapi.json")
  expect(response.status).toBe(200)
  return response.body as Document
}

describe("with the operator API on", () => {
  const server = useServer()

  it("the public document has no /operator path, and every /v1 operation", async () => {
    const document = await publicDocument(server.url)
    expect(Object.keys(document.paths).filter((path) => path.startsWith("/operator"))).toEqual([])
    expect(document.tags.map((tag) => tag.name)).not.toContain("Operator")
    expect(JSON.stringify(document)).not.toContain("/operator/v1")
    expect(document.paths["/v1/meetings"]?.post?.summary).toBe("Create a meeting")
  })

  it("the public document names this installation as its server, and its license", async () => {
    const document = await publicDocument(server.url)
    // support/server.ts configures the base URL http://127.0.0.1 (CONVENE_BASE_URL).
    expect(document.servers?.map((s) => s.url)).toEqual(["http://127.0.0.1"])
    expect(document.info.license).toEqual({ name: "Apache-2.0", identifier: "Apache-2.0" })
  })

  it("every operation of both documents has a summary and a description, every tag a description", async () => {
    const operatorDocument = (await client(server.url, OPERATOR_TOKEN).get("/operator/v1/openapi.json")).body as Document
    for (const document of [await publicDocument(server.url), operatorDocument]) {
      for (const [path, operations] of Object.entries(document.paths)) {
        for (const [method, operation] of Object.entries(operations)) {
          expect(operation.summary, `${method} ${path}`).toMatch(/\S/)
          expect(operation.description, `${method} ${path}`).toMatch(/\S/)
        }
      }
      for (const tag of document.tags) expect(tag.description, tag.name).toMatch(/\S/)
    }
  })

  it("the operator document lists exactly the operator's routes, for the operator token", async () => {
    expect(operatorRoutes.length).toBeGreaterThan(0)
    const response = await client(server.url, OPERATOR_TOKEN).get("/operator/v1/openapi.json")
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toContain("application/json")
    const document = response.body as Document
    expect(routesOf(document)).toEqual(operatorRoutes)
    expect(document.info.title).toContain("operator")
    expect(document.servers?.map((s) => s.url)).toEqual(["http://127.0.0.1"])
  })

  it("the operator document requires the operator token: 401 without it or with another, in the envelope", async () => {
    const anonymous = await client(server.url).get("/operator/v1/openapi.json")
    expectError(anonymous, 401, "unauthorized")
    expect(anonymous.headers.get("www-authenticate")).toBe("Bearer")
    expect(anonymous.body.request_id).toBe(anonymous.headers.get("x-request-id"))
    const wrong = await client(server.url, "not-the-operator-token-0123456789-abcdef").get("/operator/v1/openapi.json")
    expectError(wrong, 401, "invalid_token")
    expect(JSON.stringify(wrong.body)).not.toContain("/v1/meetings")
    // A first-party token is no operator token either.
    const user = await client(server.url, "svc_pat_v1_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA").get("/operator/v1/openapi.json")
    expectError(user, 401, "invalid_token")
  })

  it("/docs is a page under a Content-Security-Policy that allows nothing from elsewhere", async () => {
    const response = await client(server.url).get("/docs")
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toContain("text/html")
    const policy = response.headers.get("content-security-policy") ?? ""
    expect(policy).toContain("default-src 'none'")
    expect(policy).toContain("script-src 'self'")
    expect(policy).toContain("connect-src 'self'")
    expect(policy).not.toMatch(/https?:|\*|'unsafe-eval'/)
    // No inline script: the page loads the bundle from the server and configures it by a data attribute.
    const scripts = [...response.text.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)]
    expect(scripts.length).toBe(2)
    for (const [, attributes, body] of scripts) {
      expect(attributes.includes("src=") || attributes.includes('type="application/json"'), attributes).toBe(true)
      expect(body.trim()).toBe("")
    }
    expect(response.text).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)/)
  })

  it("the reference's script comes from the server, with an ETag for revalidation", async () => {
    const response = await fetch(`${server.url}/docs/scalar.js`)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toContain("javascript")
    const etag = response.headers.get("etag")
    expect(etag).toMatch(/^".+"$/)
    expect((await response.text()).length).toBeGreaterThan(1_000_000)
    const again = await fetch(`${server.url}/docs/scalar.js`, { headers: { "if-none-match": etag ?? "" } })
    expect(again.status).toBe(304)
    expect(await again.text()).toBe("")
  })
})

describe("with the operator API off", () => {
  const server = useServer({ operatorToken: null })

  it("the public document has no /operator path either", async () => {
    const document = await publicDocument(server.url)
    expect(Object.keys(document.paths).filter((path) => path.startsWith("/operator"))).toEqual([])
    expect(JSON.stringify(document)).not.toContain("/operator/v1")
    expect(document.paths["/v1/meetings"]?.get?.summary).toBe("List meetings")
  })

  it("the operator document does not exist: 404 not_found, with or without a token", async () => {
    expectError(await client(server.url).get("/operator/v1/openapi.json"), 404, "not_found")
    expectError(await client(server.url, OPERATOR_TOKEN).get("/operator/v1/openapi.json"), 404, "not_found")
  })

  it("/docs still serves the reference", async () => {
    const response = await client(server.url).get("/docs")
    expect(response.status).toBe(200)
    expect(response.headers.get("content-security-policy")).toContain("default-src 'none'")
  })
})
