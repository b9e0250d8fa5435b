/** What the host learns about a request before the API sees it, for the API's own middleware. */
import { Context, Data, type Either, type Option } from "effect"
import type { Route } from "./Routes.js"

/** The route the host matched for the request being served. */
export class CurrentRoute extends Context.Tag("@convene/http/CurrentRoute")<CurrentRoute, Route>() {}

/**
 * The body of the request being served, read once by the host (none unless the endpoint takes JSON): its
 * text and JSON value, or the reason it cannot be used, which is answered once the endpoint has
 * authenticated the caller (an anonymous client learns nothing about bodies).
 */
export class JsonBody extends Context.Tag("@convene/http/JsonBody")<JsonBody, Option.Option<ReadBody>>() {}

export type ReadBody = Either.Either<{ readonly text: string; readonly value: unknown }, BodyRejected>

/** A body the host read and refused: the failure the endpoint's body reader meets, after authentication. */
export class BodyRejected extends Data.TaggedError("BodyRejected")<{
  readonly status: 400 | 415
  readonly code: "bad_request" | "unsupported_media_type"
  readonly reason: string
}> {}
