/**
 * The route table the host consults before the router runs: which endpoint a request is for, what body it
 * takes, whether it honours Idempotency-Key, and which methods a path allows.
 *
 * The platform's router answers only "no route" (RouteNotFound): it cannot say that the path exists for other
 * methods (405 with Allow), and the body must be checked (415, 413) before the platform reads it. So this
 * table is built from the same contract (HttpApi.reflect) and matched with the same matcher the router uses
 * (find-my-way-ts, re-exported by @effect/platform), configured as strictly as the router is (`routerConfig`).
 */
import * as HttpApi from "@effect/platform/HttpApi"
import * as HttpApiSchema from "@effect/platform/HttpApiSchema"
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import type * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import type * as HttpMethod from "@effect/platform/HttpMethod"
import { Context, Option } from "effect"
import { Api } from "@convene/api/Api"
import { Idempotent } from "@convene/api/Idempotency"
import { NoHead, PartnerInvalidCode } from "@convene/api/Partner"

const { FindMyWay } = HttpLayerRouter

/**
 * How both the router and this table match paths: exactly. Case matters, and neither a trailing slash nor a
 * doubled one is forgiven, so a proxy rule on a path prefix (say /operator/) means what it says.
 */
export const routerConfig = {
  caseSensitive: true,
  ignoreTrailingSlash: false,
  ignoreDuplicateSlashes: false
} as const

/**
 * What a route's endpoint takes as its body: none, JSON (read by the host), multipart, or its own (`handler`:
 * the routes beside the contract, such as the OAuth endpoints and the sign-in forms, read their bodies
 * themselves).
 */
export type BodyKind = "none" | "json" | "multipart" | "handler"

export interface Route {
  readonly method: HttpMethod.HttpMethod
  readonly path: string
  readonly body: BodyKind
  /** The endpoint honours Idempotency-Key. */
  readonly idempotent: boolean
  /** The partner code of a body or field that does not decode, when not `invalid_request` (PartnerInvalidCode). */
  readonly invalidCode?: string | undefined
  /** A GET that HEAD may not reach (NoHead: reading it changes state). */
  readonly noHead?: boolean | undefined
}

const bodyOf = (endpoint: Pick<HttpApiEndpoint.HttpApiEndpoint<string, HttpMethod.HttpMethod>, "payloadSchema">): BodyKind =>
  Option.match(endpoint.payloadSchema, {
    onNone: () => "none",
    onSome: ({ ast }) =>
      HttpApiSchema.getMultipart(ast) !== undefined || HttpApiSchema.getMultipartStream(ast) !== undefined
        ? "multipart"
        : "json"
  })

export interface Routes {
  /** The route of a method and path (HEAD finds GET, as the router does, unless the GET is NoHead). */
  readonly find: (method: string, path: string) => Route | undefined
  /** The methods the path allows (empty when the path is unknown). */
  readonly allowed: (path: string) => ReadonlyArray<string>
}

/** A route the host serves beside the contract (documents, OAuth endpoints, sign-in pages). */
export interface ExtraRoute {
  readonly method: HttpMethod.HttpMethod
  readonly path: string
}

/**
 * Every route of the contract, plus those the host serves beside it. The operator's routes are in only when
 * the operator API is on (off, they do not exist: 404, not 405).
 */
export const make = (options: { readonly operator: boolean; readonly extra: ReadonlyArray<ExtraRoute> }): Routes => {
  const router = FindMyWay.make<Route>(routerConfig)
  const methods = new Set<HttpMethod.HttpMethod>()
  const add = (route: Route) => {
    router.on(route.method, route.path as `/${string}`, route)
    methods.add(route.method)
  }
  for (const route of options.extra) {
    add({ method: route.method, path: route.path, body: route.method === "GET" ? "none" : "handler", idempotent: false })
  }
  HttpApi.reflect(Api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, group }) => {
      if (group.identifier === "operator" && !options.operator) return
      add({
        method: endpoint.method,
        path: endpoint.path,
        body: bodyOf(endpoint),
        idempotent: Context.getOption(endpoint.annotations, Idempotent).pipe(Option.getOrElse(() => false)),
        invalidCode: Context.getOption(endpoint.annotations, PartnerInvalidCode).pipe(
          Option.orElse(() => Context.getOption(group.annotations, PartnerInvalidCode)),
          Option.getOrUndefined
        ),
        noHead: Context.getOption(endpoint.annotations, NoHead).pipe(Option.getOrElse(() => false))
      })
    }
  })
  const headOf = (path: string) => {
    const get = router.find("GET", path)?.handler
    return get?.noHead === true ? undefined : get
  }
  const find = (method: string, path: string) => router.find(method, path)?.handler ?? (method === "HEAD" ? headOf(path) : undefined)
  return {
    find,
    allowed: (path) => [...methods].filter((method) => router.find(method, path) !== undefined)
  }
}

const unreservedOrSlash = /^[A-Za-z0-9\-._~/]$/

/**
 * Whether a request path is in the one form the routes match: absolute, no empty segment (`//`), no trailing
 * slash, no `.` or `..` segment, no `;` parameters, and no percent-encoding of a character that needs none
 * (`%6F` for `o`, `%2F` for `/`). The router itself would read `/v1/meetings;x` as `/v1/meetings` and decode
 * `%6F`, which lets a request past a proxy rule on the literal prefix; such paths answer 404 instead.
 */
export const isCanonical = (path: string): boolean => {
  if (!path.startsWith("/") || path.includes(";")) return false
  if (path !== "/" && path.endsWith("/")) return false
  const segments = path.split("/").slice(1)
  if (segments.some((segment) => segment === "" || segment === "." || segment === "..")) return false
  for (let index = path.indexOf("%"); index !== -1; index = path.indexOf("%", index + 1)) {
    const hex = path.slice(index + 1, index + 3)
    if (!/^[0-9A-Fa-f]{2}$/.test(hex) || unreservedOrSlash.test(String.fromCharCode(parseInt(hex, 16)))) return false
  }
  return true
}
