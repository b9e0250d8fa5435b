import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { ContextForPrompt, ContextItems } from "@convene/core"
import { Effect } from "effect"
import { Api } from "@convene/api/Api"
import { BodyTooLarge, MediaTypeUnsupported } from "@convene/api/Errors"
import { ContextApi } from "@convene/api/Context"
import { encoded } from "./Encoded.js"
import { asCaller } from "./Security.js"
import { collectUpload } from "./Uploads.js"

/** The upload of the request being served, as core takes it (read only when core asks, after the access checks). */
const readUpload = Effect.map(collectUpload, ({ fields, file }) => ({
  fileName: file.fileName,
  contentType: file.contentType,
  bytes: file.bytes,
  kind: fields["kind"]
}))

const answers = {
  list: encoded(ContextApi, "list"),
  get: encoded(ContextApi, "get")
}

export const ContextLive = HttpApiBuilder.group(Api, "context", (handlers) =>
  Effect.gen(function*() {
    const items = yield* ContextItems
    const prompt = yield* ContextForPrompt
    return handlers
      .handle("list", asCaller((principal, { path, urlParams }) => Effect.map(items.list(principal, path.id, urlParams), answers.list)))
      .handle("upload", asCaller((principal, { path }) =>
        items.upload(principal, path.id, readUpload).pipe(
          Effect.catchTags({
            UnsupportedUpload: (refused) => Effect.fail(new MediaTypeUnsupported({ message: refused.message })),
            TextTooLarge: (refused) => Effect.fail(new BodyTooLarge({ message: refused.message }))
          })
        )))
      .handle("get", asCaller((principal, { path }) => Effect.map(items.get(principal, path.id, path.context_id), answers.get)))
      .handle("delete", asCaller((principal, { path }) => items.delete(principal, path.id, path.context_id)))
      .handle("content", asCaller((principal, { path }) => prompt.text(principal, path.id, path.context_id)))
  }))
