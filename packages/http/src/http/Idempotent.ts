/**
 * Idempotency-Key on the HTTP side: the fingerprint of a request (method, path with query, and the body as
 * canonical JSON) and the replay of the stored response. The rules themselves are the core's Idempotency
 * service. Without a key the work simply runs.
 */
import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Crypto, Idempotency, StoredResponse } from "@convene/core"
import { Effect, Schema } from "effect"
import { CurrentPrincipal } from "../api/Security.js"

/** JSON with object keys sorted at every depth, so that key order and white space do not matter. */
export const canonicalJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

const parseOrRaw = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

export const idempotently = <A, I, E, R>(options: {
  readonly key: string | undefined
  readonly schema: Schema.Schema<A, I, never>
  readonly status: number
  readonly work: Effect.Effect<A, E, R>
}) =>
  Effect.gen(function*() {
    if (options.key === undefined) return yield* options.work
    const principal = yield* CurrentPrincipal
    const request = yield* HttpServerRequest.HttpServerRequest
    const crypto = yield* Crypto
    const body = yield* Effect.orDie(request.text)
    const fingerprint = yield* crypto.sha256(`${request.method} ${request.url}\n${canonicalJson(parseOrRaw(body))}`)
    const encode = Schema.encode(options.schema)
    const outcome = yield* Idempotency.pipe(Effect.flatMap((idempotency) =>
      idempotency.run(
        { scope: principal.credential_id, key: options.key!, fingerprint },
        options.work.pipe(
          Effect.flatMap((value) => Effect.orDie(encode(value))),
          Effect.map((encoded) => new StoredResponse({ status: options.status, body: JSON.stringify(encoded) }))
        )
      )
    ))
    return HttpServerResponse.text(outcome.response.body, {
      status: outcome.response.status,
      contentType: "application/json",
      headers: outcome.replayed ? { "idempotent-replayed": "true" } : {}
    })
  })
