/**
 * The operator API as the commands call it: `HttpApiClient` over the server's own contract
 * (`OperatorDocumentApi` from @convene/http), so requests are encoded and answers decoded by the same schemas
 * the server uses, and a refusal decodes into the contract's error classes.
 *
 * `request` answers the decoded value and the body exactly as the server sent it (printed by `--json`), and
 * turns every failure into a `CommandFailed` line: the server's envelope (`error: <message> (<code>, request
 * <request_id>)`, exit 1), a server that cannot be reached (exit 3), or an input the contract refuses before
 * anything is sent (exit 2). The envelope is read from the body the error was decoded from: the contract's
 * error classes keep the message but not the `code` or the `request_id`.
 */
import * as FetchHttpClient from "@effect/platform/FetchHttpClient"
import * as HttpClient from "@effect/platform/HttpClient"
import * as HttpClientError from "@effect/platform/HttpClientError"
import type * as HttpClientResponse from "@effect/platform/HttpClientResponse"
import { Operator } from "@convene/client"
import { Effect, Layer, Option, ParseResult, type Redacted, Ref } from "effect"
import { Connection } from "./Connection.js"
import { CommandFailed, connectionFailure, describeParseError } from "./Failure.js"

/**
 * @convene/client's operator client on `url`, sending `token`, over a fetch client that tells `onResponse` of each
 * response it receives (for the body `--json` prints and the envelope of a refusal).
 */
const makeClient = (
  url: string,
  token: Redacted.Redacted<string>,
  onResponse: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<void>
) =>
  Operator.make({ baseUrl: url, token }).pipe(
    Effect.map((client) => client.operator),
    Effect.provide(Layer.effect(HttpClient.HttpClient, Effect.map(HttpClient.HttpClient, HttpClient.tap(onResponse)))),
    Effect.provide(FetchHttpClient.layer)
  )

/** The operator group of the typed client: `client.listWorkspaces(...)`, `client.createUser(...)`, ... */
export type OperatorClient = Effect.Effect.Success<ReturnType<typeof makeClient>>

/** A decoded answer and the body as the server sent it ("" for 204). */
export interface Answer<A> {
  readonly value: A
  readonly body: string
}

/** The body of a response, as text (read once by the client; the fetch client keeps it). */
const bodyText = (response: HttpClientResponse.HttpClientResponse): Effect.Effect<string> =>
  response.arrayBuffer.pipe(
    Effect.map((buffer) => new TextDecoder().decode(buffer)),
    Effect.orElseSucceed(() => "")
  )

/** The error codes of a failed connection: a Node system error, or an AggregateError of several (IPv4 and IPv6). */
const codesOf = (cause: unknown): ReadonlyArray<string> => {
  if (typeof cause !== "object" || cause === null) return []
  const own = "code" in cause && typeof cause.code === "string" ? [cause.code] : []
  const nested = "errors" in cause && Array.isArray(cause.errors) ? cause.errors.flatMap(codesOf) : []
  const inner = "cause" in cause ? codesOf(cause.cause) : []
  return [...own, ...nested, ...inner]
}

const messageOf = (cause: unknown): string => {
  if (typeof cause !== "object" || cause === null) return String(cause)
  const inner = "cause" in cause ? cause.cause : undefined
  if (inner !== undefined && inner !== null) return messageOf(inner)
  return "message" in cause && typeof cause.message === "string" ? cause.message : String(cause)
}

/** Why a request never got an answer, in a few words. */
export const unreachableReason = (cause: unknown): string => {
  const codes = codesOf(cause)
  return codes.length === 0 ? messageOf(cause) : connectionFailure(codes) ?? messageOf(cause)
}

interface Envelope {
  readonly error: string
  readonly code: string
  readonly request_id: string
}

const envelopeOf = (body: string): Option.Option<Envelope> => {
  try {
    const parsed: unknown = JSON.parse(body)
    if (
      typeof parsed === "object" && parsed !== null && "error" in parsed && typeof parsed.error === "string" &&
      "code" in parsed && typeof parsed.code === "string"
    ) {
      const requestId = "request_id" in parsed && typeof parsed.request_id === "string" ? parsed.request_id : "unknown"
      return Option.some({ error: parsed.error, code: parsed.code, request_id: requestId })
    }
  } catch {
    // not JSON: told below
  }
  return Option.none()
}

/** The line for a failure after the server answered. */
const refused = (url: string, error: unknown, response: HttpClientResponse.HttpClientResponse) =>
  Effect.map(bodyText(response), (body) =>
    Option.match(envelopeOf(body), {
      onSome: (envelope) => CommandFailed.failed(`error: ${envelope.error} (${envelope.code}, request ${envelope.request_id})`),
      onNone: () => {
        const status = `HTTP ${response.status}`
        return ParseResult.isParseError(error) && response.status < 300
          ? CommandFailed.failed(`error: the answer of ${url} (${status}) does not match this convene's contract: ${describeParseError(error)}`)
          : CommandFailed.failed(`error: unexpected answer from ${url}: ${status}${body === "" ? "" : `: ${body.slice(0, 200)}`}`)
      }
    }))

/** What a failed call means for the person at the terminal. */
const explain = (url: string, error: unknown, response: Option.Option<HttpClientResponse.HttpClientResponse>) => {
  if (HttpClientError.isHttpClientError(error) && error._tag === "RequestError") {
    return Effect.succeed(
      error.reason === "Transport"
        ? CommandFailed.unreachable(`error: cannot reach Convene at ${url}: ${unreachableReason(error.cause)}`)
        : CommandFailed.usage(`cannot send the request to ${url}: ${error.message}`)
    )
  }
  if (Option.isSome(response)) return refused(url, error, response.value)
  // Nothing was sent: the contract refused an input while encoding the request.
  return Effect.succeed(
    ParseResult.isParseError(error)
      ? CommandFailed.usage(describeParseError(error))
      : CommandFailed.failed(`error: ${error instanceof Error ? error.message : String(error)}`)
  )
}

/**
 * One call of the operator API with the connection's URL and token. `call` asks the client for the response too
 * (`withResponse: true`), whose body `--json` prints.
 */
export const request = <A, E>(
  call: (client: OperatorClient) => Effect.Effect<readonly [A, HttpClientResponse.HttpClientResponse], E>
): Effect.Effect<Answer<A>, CommandFailed, Connection> =>
  Effect.gen(function*() {
    const { token, url } = yield* Connection
    const seen = yield* Ref.make(Option.none<HttpClientResponse.HttpClientResponse>())
    const client = yield* makeClient(url, token, (response) => Ref.set(seen, Option.some(response)))
    const [value, response] = yield* call(client).pipe(
      Effect.catchAll((error) => Effect.flatMap(Effect.flatMap(Ref.get(seen), (response) => explain(url, error, response)), Effect.fail))
    )
    return { value, body: yield* bodyText(response) }
  })
