/**
 * @convene/client: typed clients of Convene's HTTP API, made by @effect/platform's HttpApiClient from the
 * contract the server itself serves (`@convene/api`), so requests and answers are checked by the same
 * schemas on both sides. No node:* module in its graph: it runs in Node 20.11+, browsers, Deno and Bun.
 *
 * - `makeClient({ baseUrl, token })`: the first-party API over `fetch`; `ConveneClient.layer(...)` for Effect programs.
 * - `makeOperatorClient({ baseUrl, token })`: the operator API; `OperatorClient.layer(...)`.
 */
export type { ClientOptions, FetchClientOptions } from "./ClientOptions.js"
export { type Client, ConveneClient, make, makeClient } from "./ConveneClient.js"
export * as Operator from "./OperatorClient.js"
export { makeOperatorClient, OperatorClient } from "./OperatorClient.js"
