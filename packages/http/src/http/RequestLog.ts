/**
 * What the access log line of a request says beyond its method, status and duration: filled in by the rings a
 * request passes (the host's routing, authentication, the failure handler) and written once, by the gate,
 * after the answer (see Lifecycle.ts). Nothing secret goes in here: no token, password, body or query.
 */
import { type Cause, Context } from "effect"

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

export class RequestLog extends Context.Tag("@convene/http/RequestLog")<RequestLog, RequestLogEntry>() {}

export const empty = (): RequestLogEntry => ({
  requestId: undefined,
  route: undefined,
  credentialKind: undefined,
  credentialId: undefined,
  workspaceId: undefined,
  cause: undefined
})
