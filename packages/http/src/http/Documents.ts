/**
 * The documents served beside the API, every byte of them from this server, so that an installation in a
 * private network calls out to nothing:
 * - the public OpenAPI document (PublicApi: the first-party API, without the operator's paths), with this
 *   installation's base URL as its server;
 * - the API reference at /docs: Scalar's standalone bundle, from the @scalar/api-reference package and served
 *   at /docs/scalar.js, configured to load no fonts and to show none of Scalar's hosted services (share,
 *   SDK generation, hosted client, AI agent), under a Content-Security-Policy that allows nothing from
 *   elsewhere and no inline script;
 * - the operator API's own OpenAPI document, behind the operator token like every operator path (401 without
 *   it, 404 when the operator API is off).
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as OpenApi from "@effect/platform/OpenApi"
import { type Crypto, NotFound } from "@convene/core"
import { Effect, Layer, Option, Redacted, Schema } from "effect"
import { createHash } from "node:crypto"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { OperatorDocumentApi, PublicApi } from "@convene/api/Api"
import { Missing, Unauthorized } from "@convene/api/Errors"
import * as OpenApiDoc from "@convene/api/OpenApiDoc"
import { OperatorAuth } from "@convene/api/Security"
import type { HostConfig } from "../Config.js"
import type * as Routes from "./Routes.js"
import { bearerToken, OperatorAuthLive } from "./Security.js"

/** Where the documents are served (the route table lists them beside the contract's routes). */
export const paths = {
  openApi: "/v1/openapi.json",
  docs: "/docs",
  docsScript: "/docs/scalar.js",
  operatorOpenApi: "/operator/v1/openapi.json"
} as const

/**
 * The documents' paths for the route table: the operator's document only when the operator API is on (off, its
 * path does not exist, like every operator path: 404 for every method, not 405).
 */
export const served = (options: { readonly operator: boolean }): ReadonlyArray<Routes.ExtraRoute> =>
  Object.values(paths)
    .filter((path) => options.operator || path !== paths.operatorOpenApi)
    .map((path) => ({ method: "GET", path }))

/**
 * What the reference page may load: scripts, styles, fonts, images and requests from this server only; no
 * inline script, no eval, no plugins, no frames, no forms, no <base>. Inline styles stay allowed: the bundle
 * writes its stylesheets into <style> elements at run time and sets style attributes, with texts that depend on
 * the document and the theme, so no list of hashes can be given ahead and a nonce reaches neither. A style
 * runs no code; every script is this server's.
 */
export const docsContentSecurityPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join("; ")

/**
 * Scalar's configuration (its options of @scalar/api-reference 1.46): nothing that reaches Scalar's services.
 * The document is read from this server, by a URL relative to the page so that a path prefix of a reverse
 * proxy carries over.
 */
const scalarConfiguration = {
  url: paths.openApi.slice(1),
  // The default fonts are loaded from fonts.scalar.com; the page uses the system's fonts instead.
  withDefaultFonts: false,
  // Unused by this version of the bundle; off should a later one start using it.
  telemetry: false,
  // The developer toolbar (shown on localhost by default) offers sharing and SDK generation through scalar.com.
  showDeveloperTools: "never",
  // The "open API client" button opens Scalar's hosted client with the document's URL.
  hideClientButton: true,
  // "Ask AI" sends the document to Scalar's agent service.
  agent: { disabled: true },
  documentDownloadType: "json",
  defaultOpenAllTags: true
}

const escapeHtml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")

/** The reference page: Scalar mounts itself where `#api-reference` is and reads its configuration from it. */
const docsPage = (title: string) => `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <title>${escapeHtml(title)}</title>
    <link rel="icon" href="data:,">
  </head>
  <body>
    <script id="api-reference" type="application/json" data-configuration="${escapeHtml(JSON.stringify(scalarConfiguration))}"></script>
    <script src="${paths.docsScript.slice(1)}"></script>
  </body>
</html>
`

/** Scalar's standalone bundle, read once from the installed package. */
const readScalarBundle = Effect.sync(() => {
  const file = createRequire(import.meta.url).resolve("@scalar/api-reference/browser/standalone.js")
  const bytes = new Uint8Array(readFileSync(file))
  return { bytes, etag: `"${createHash("sha256").update(bytes).digest("base64url").slice(0, 27)}"` }
})

/** The operator's failures, in the envelope (with WWW-Authenticate), as the operator's endpoints answer them. */
const OperatorDenied = Schema.Union(Unauthorized, Missing)

/** Registers the documents' routes on the API's router; needs Crypto for the operator token's comparison. */
export const layer = (config: HostConfig): Layer.Layer<never, never, Crypto> =>
  HttpApiBuilder.Router.use(Effect.fnUntraced(function*(router) {
    const publicDocument = OpenApiDoc.forInstallation(OpenApi.fromApi(PublicApi), config.baseUrl)
    const operatorDocument = OpenApiDoc.forInstallation(OpenApi.fromApi(OperatorDocumentApi), config.baseUrl)
    const bundle = yield* readScalarBundle
    const operatorAuth = yield* OperatorAuth

    const publicResponse = yield* Effect.orDie(HttpServerResponse.json(publicDocument))
    const operatorResponse = yield* Effect.orDie(HttpServerResponse.json(operatorDocument))

    yield* router.get(paths.openApi, Effect.succeed(publicResponse))

    yield* router.get(
      paths.docs,
      Effect.succeed(HttpServerResponse.html(docsPage(publicDocument.info.title)).pipe(
        HttpServerResponse.setHeaders({
          "content-security-policy": docsContentSecurityPolicy,
          "x-content-type-options": "nosniff",
          "referrer-policy": "no-referrer",
          "cache-control": "no-cache"
        })
      ))
    )

    yield* router.get(
      paths.docsScript,
      Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
        const headers = { etag: bundle.etag, "cache-control": "no-cache", "x-content-type-options": "nosniff" }
        return request.headers["if-none-match"] === bundle.etag
          ? HttpServerResponse.empty({ status: 304, headers })
          : HttpServerResponse.uint8Array(bundle.bytes, { contentType: "text/javascript; charset=utf-8", headers })
      })
    )

    yield* router.get(
      paths.operatorOpenApi,
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
        operatorAuth.operator(Redacted.make(Option.getOrElse(bearerToken(request), () => "")))).pipe(
          Effect.as(operatorResponse),
          Effect.catchAll((error) =>
            Effect.flatMap(Schema.encode(OperatorDenied)(error), (body) =>
              HttpServerResponse.json(body, { status: error instanceof NotFound ? 404 : 401 }))
          ),
          Effect.orDie
        )
    )
  })).pipe(Layer.provide(OperatorAuthLive(config)))
