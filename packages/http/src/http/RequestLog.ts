/**
 * What the access log line of a request says beyond its method, status and duration: filled in by the rings a
 * request passes (the host's routing, authentication, the failure handler) and written once, by the gate,
 * after the answer (see Lifecycle.ts). Nothing secret goes in here: no token, password, body or query.
 *
 * The gate makes the entry when the request arrives and keeps it beside Node's request (`track`); the rings find it
 * from the request they serve (`entryOf`), whatever wraps it (a request with its body read keeps the same
 * `source`). A request served without the gate (in-process tests) has none, and the rings log what they must
 * themselves.
 */
import type { HttpServerRequest } from "@effect/platform"
import type { Cause } from "effect"

export interface RequestLogEntry {
  /** The id the client sees in X-Request-Id. */
  requestId: string | undefined
  /** The route template (`/v1/meetings/{id}`), not the path with its ids. */
  route: string | undefined
  /** `personal_access_token`, `access_token`, `short_lived`, `api_key` or `operator`. */
  credentialKind: string | undefined
  credentialId: string | undefined
  workspaceId: string | undefined
  /** Why a request was answered 500. */
  cause: Cause.Cause<unknown> | undefined
}

const empty = (): RequestLogEntry => ({
  requestId: undefined,
  route: undefined,
  credentialKind: undefined,
  credentialId: undefined,
  workspaceId: undefined,
  cause: undefined
})

const entries = new WeakMap<object, RequestLogEntry>()

/** A new entry for the request behind `source` (Node's request). */
export const track = (source: object): RequestLogEntry => {
  const entry = empty()
  entries.set(source, entry)
  return entry
}

/** The entry of the request being served, if the gate is tracking it. */
export const entryOf = (request: HttpServerRequest.HttpServerRequest): RequestLogEntry | undefined =>
  typeof request.source === "object" && request.source !== null ? entries.get(request.source) : undefined
