/**
 * What makes two requests "the same" for an Idempotency-Key: the method, the path, the query parameters
 * (their order aside) and the body as canonical JSON (key order and white space aside). Core computes it
 * from the request's parts, so every host that embeds the core fingerprints requests identically.
 */
import { Effect } from "effect"
import { Crypto } from "../ports/Crypto.js"

/** The parts of a request that its fingerprint covers. */
export interface RequestParts {
  readonly method: string
  /** The path without the query string, as the client sent it. */
  readonly path: string
  /** The query parameters, in any order; a repeated name appears once per value. */
  readonly query: ReadonlyArray<readonly [name: string, value: string]>
  /** The body as a JSON value (undefined when there is none). */
  readonly body: unknown
}

/** JSON with object keys sorted at every depth; undefined members are left out, as JSON.stringify does. */
export const canonicalJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map((item) => (item === undefined ? "null" : canonicalJson(item))).join(",")}]`
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value)
      .filter(([, member]) => member !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([key, member]) => `${JSON.stringify(key)}:${canonicalJson(member)}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

const byNameThenValue = (a: readonly [string, string], b: readonly [string, string]) =>
  a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0

/** The canonical text of a request: equal for requests that are the same, different otherwise. */
export const canonicalRequest = (request: RequestParts): string =>
  canonicalJson([request.method.toUpperCase(), request.path, [...request.query].sort(byNameThenValue), request.body ?? null])

/** The SHA-256 of the canonical request. */
export const fingerprint = (request: RequestParts): Effect.Effect<string, never, Crypto> =>
  Effect.flatMap(Crypto, (crypto) => crypto.sha256(canonicalRequest(request)))
