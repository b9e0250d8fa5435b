/**
 * What makes two requests the same for an Idempotency-Key (idempotency/Fingerprint.ts): the method (any case),
 * the path, the query parameters in any order, and the body as canonical JSON.
 */
import { canonicalJson, canonicalRequest, Crypto, fingerprint, type RequestParts } from "@convene/core"
import { NodeCrypto } from "@convene/node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck } from "effect"

/** A copy of a JSON value with the keys of every object in another order, chosen by `seed`. */
const reordered = (value: unknown, seed: number): unknown => {
  if (Array.isArray(value)) return value.map((item, i) => reordered(item, seed + i))
  if (value === null || typeof value !== "object") return value
  const entries = Object.entries(value).map(([key, member], i) => [key, reordered(member, seed + i)] as const)
  // A deterministic shuffle: sort by a hash of (seed, key).
  const rank = (key: string) => [...key].reduce((h, c) => Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0, (seed * 2654435761) >>> 0)
  return Object.fromEntries(entries.sort(([a], [b]) => rank(a) - rank(b) || (a < b ? -1 : 1)))
}

/** The same entries in the reverse order (a different order whenever there are two or more). */
const reversedKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(reversedKeys)
  if (value === null || typeof value !== "object") return value
  return Object.fromEntries(Object.entries(value).reverse().map(([key, member]) => [key, reversedKeys(member)]))
}

const json = FastCheck.jsonValue({ maxDepth: 3, depthSize: "small" })
const query = FastCheck.array(FastCheck.tuple(FastCheck.constantFrom("a", "b", "limit", "q"), FastCheck.string({ maxLength: 4 })), { maxLength: 6 })
const method = FastCheck.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE")
const path = FastCheck.stringMatching(/^\/v1\/[a-z-]{1,12}(\/[a-z0-9-]{1,8})?$/)
const request: FastCheck.Arbitrary<RequestParts> = FastCheck.record({ method, path, query, body: json })

const digest = (parts: RequestParts) => Effect.runSync(Effect.provideService(fingerprint(parts), Crypto, NodeCrypto.crypto))

describe("canonicalJson", () => {
  it.prop("does not depend on the order of keys, at any depth", [json, FastCheck.integer()], ([value, seed]) => {
    expect(canonicalJson(reordered(value, seed))).toBe(canonicalJson(value))
    expect(canonicalJson(reversedKeys(value))).toBe(canonicalJson(value))
  })

  it.prop("is JSON of the same value", [json], ([value]) => {
    expect(JSON.parse(canonicalJson(value))).toStrictEqual(JSON.parse(JSON.stringify(value)))
  })

  it.prop("tells different values apart", [json, json], ([a, b]) => {
    const same = JSON.stringify(JSON.parse(canonicalJson(a))) === JSON.stringify(JSON.parse(canonicalJson(b)))
    expect(canonicalJson(a) === canonicalJson(b)).toBe(same)
  })

  it("sorts keys at every depth and leaves undefined members out, as JSON.stringify does", () => {
    expect(canonicalJson({ b: 1, a: { d: [{ z: 1, y: 2 }], c: null }, u: undefined })).toBe("{\"a\":{\"c\":null,\"d\":[{\"y\":2,\"z\":1}]},\"b\":1}")
    expect(canonicalJson([undefined, 1])).toBe("[null,1]")
    expect(canonicalJson(undefined)).toBe("null")
  })
})

describe("fingerprint", () => {
  it.prop("does not depend on the order of query parameters, body keys or the method's case", [request, FastCheck.integer()], ([parts, seed]) => {
    const same: RequestParts = {
      method: parts.method.toLowerCase(),
      path: parts.path,
      query: [...parts.query].reverse(),
      body: reordered(parts.body, seed)
    }
    expect(canonicalRequest(same)).toBe(canonicalRequest(parts))
    expect(digest(same)).toBe(digest(parts))
    expect(digest(parts)).toMatch(/^[0-9a-f]{64}$/)
  })

  it.prop("changes when the method, the path, a query value or the body changes", [request, method, FastCheck.string({ minLength: 1, maxLength: 3 }), json], ([parts, otherMethod, extra, otherBody]) => {
    const original = digest(parts)
    const changes: Array<RequestParts> = [
      { ...parts, path: `${parts.path}/${extra}` },
      { ...parts, query: [...parts.query, ["q", extra]] },
      { ...parts, body: [parts.body] }
    ]
    if (otherMethod !== parts.method) changes.push({ ...parts, method: otherMethod })
    const [first, ...rest] = parts.query
    if (first !== undefined) changes.push({ ...parts, query: [[first[0], `${first[1]}${extra}`], ...rest] })
    if (canonicalJson(otherBody) !== canonicalJson(parts.body)) changes.push({ ...parts, body: otherBody })
    for (const changed of changes) expect(digest(changed), JSON.stringify(changed)).not.toBe(original)
  })

  it("keeps the parts apart: a path, query and body cannot pass for one another", () => {
    const base: RequestParts = { method: "POST", path: "/v1/meetings", query: [], body: null }
    const requests: ReadonlyArray<RequestParts> = [
      base,
      { ...base, path: "/v1/meetings?a=1" },
      { ...base, query: [["a", "1"]] },
      { ...base, body: { a: "1" } },
      { ...base, body: "a=1" },
      { ...base, query: [["a", "1"], ["a", "1"]] },
      { ...base, query: [["a=1", ""]] }
    ]
    const digests = requests.map(digest)
    expect(new Set(digests).size).toBe(requests.length)
  })
})

describe("the canonical forms", () => {
  it("writes objects with their keys sorted, at every depth, and leaves out undefined members", () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: true, y: null }], c: "x" }, u: undefined })).toBe(
      "{\"a\":{\"c\":\"x\",\"d\":[3,{\"y\":null,\"z\":true}]},\"b\":1}"
    )
    expect(canonicalJson([undefined, 1])).toBe("[null,1]")
    expect(canonicalJson(undefined)).toBe("null")
  })

  it("writes a request as its upper-case method, path, query sorted by name then value, and body", () => {
    expect(canonicalRequest({
      method: "post",
      path: "/v1/meetings",
      query: [["b", "2"], ["a", "9"], ["b", "1"], ["a", "10"]],
      body: { title: "T" }
    })).toBe("[\"POST\",\"/v1/meetings\",[[\"a\",\"10\"],[\"a\",\"9\"],[\"b\",\"1\"],[\"b\",\"2\"]],{\"title\":\"T\"}]")
    expect(canonicalRequest({ method: "DELETE", path: "/x", query: [], body: undefined })).toBe("[\"DELETE\",\"/x\",[],null]")
  })
})
