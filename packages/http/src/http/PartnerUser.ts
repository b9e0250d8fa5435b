/**
 * The partner API's user context: its authentication (the partner OAuth server's access token, decided by the core's
 * PartnerOAuth.authenticate) and its handlers, which call the first-party services with the token's principal and
 * the partner rules of PartnerUserContext. Attachments answer with a fresh pre-signed download URL (AttachmentLinks),
 * which /v1/partner/files/... serves without a token.
 */
import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import {
  type Attachment,
  AttachmentLinks,
  Attachments,
  BacklogItems,
  type PartnerCaller,
  PartnerOAuth,
  PartnerUserContext,
  type Principal
} from "@convene/core"
import { Effect, Layer, Redacted } from "effect"
import { Api } from "@convene/api/Api"
import {
  asPartnerFailure,
  CurrentPartnerCaller,
  PartnerAttachment,
  PartnerRangeUnsatisfiable,
  PartnerUserAuth
} from "@convene/api/PartnerUser"
import type { HostConfig } from "../Config.js"
import { downloadAnswer, openUpload } from "./Attachments.js"
import * as RequestLog from "./RequestLog.js"

/** Who called, for the access line: the token's credential id and the app's client id. */
const noteCaller = (request: HttpServerRequest.HttpServerRequest, caller: PartnerCaller) => {
  const log = RequestLog.entryOf(request)
  if (log === undefined) return
  log.credentialKind = "partner_access_token"
  log.credentialId = caller.principal.credential_id
}

export const PartnerUserAuthLive = Layer.effect(
  PartnerUserAuth,
  Effect.gen(function*() {
    const oauth = yield* PartnerOAuth
    return {
      partnerBearer: () =>
        Effect.gen(function*() {
          const request = yield* HttpServerRequest.HttpServerRequest
          const header = request.headers["authorization"]
          const caller = yield* oauth.authenticate(header === undefined ? undefined : Redacted.make(header))
          noteCaller(request, caller)
          return caller
        })
    }
  })
)

/** The handler, given the caller's principal, failing with the partner forms of the core's errors. */
const asUser = <Request, A, E, R>(handler: (principal: Principal, request: Request) => Effect.Effect<A, E, R>) => (request: Request) =>
  asPartnerFailure(Effect.flatMap(CurrentPartnerCaller, (caller) => handler(caller.principal, request)))

/** The handler, given the caller (principal and app), failing with the partner forms of the core's errors. */
const asCaller = <Request, A, E, R>(handler: (caller: PartnerCaller, request: Request) => Effect.Effect<A, E, R>) => (request: Request) =>
  asPartnerFailure(Effect.flatMap(CurrentPartnerCaller, (caller) => handler(caller, request)))

/** A range past the end of the file: 416 in the partner envelope, with `Content-Range: bytes * /size`. */
const unsatisfiable = (size: number) =>
  Effect.fail(new PartnerRangeUnsatisfiable({ size, message: `the range asks for bytes past the end of the file (${size} bytes)` }))

export const PartnerUserLive = (config: HostConfig) =>
  HttpApiBuilder.group(Api, "partnerUser", (handlers) =>
    Effect.gen(function*() {
      const context = yield* PartnerUserContext
      const backlog = yield* BacklogItems
      const attachments = yield* Attachments
      const links = yield* AttachmentLinks

      /** The attachment with a fresh pre-signed download URL. */
      const linked = (principal: Principal, attachment: Attachment) =>
        Effect.map(links.mint(config.baseUrl, attachment, principal.workspace_id), (link) =>
          new PartnerAttachment({ ...attachment, ...link }, { disableValidation: true }))

      return handlers
        .handle("listMeetings", asUser((principal, { urlParams }) => context.listMeetings(principal, urlParams)))
        .handle("listAgendaItems", asUser((principal, { path, urlParams }) => context.listAgenda(principal, path.id, urlParams)))
        .handle("createAgendaItem", asUser((principal, { path, payload }) => context.createAgendaItem(principal, path.id, payload)))
        .handle(
          "updateAgendaItem",
          asUser((principal, { path, payload }) => context.updateAgendaItem(principal, path.id, path.item_id, payload))
        )
        .handle("listBacklogItems", asUser((principal, { urlParams }) => backlog.list(principal, urlParams)))
        .handle("createBacklogItem", asUser((principal, { payload }) => backlog.create(principal, payload)))
        .handle("backlogHistory", asUser((principal, { urlParams }) => backlog.history(principal, urlParams)))
        .handle("getBacklogItem", asUser((principal, { path }) => backlog.get(principal, path.id)))
        .handle("updateBacklogItem", asUser((principal, { path, payload }) => backlog.update(principal, path.id, payload)))
        .handle("deleteBacklogItem", asUser((principal, { path }) => backlog.delete(principal, path.id)))
        .handle("assignBacklogItem", asUser((principal, { path, payload }) => backlog.assign(principal, path.id, payload)))
        .handle(
          "listAttachments",
          asUser((principal, { path, urlParams }) =>
            Effect.flatMap(attachments.list(principal, path.id, urlParams), (listed) =>
              Effect.map(Effect.forEach(listed.items, (item) => linked(principal, item)), (items) => ({ ...listed, items }))))
        )
        .handle(
          "uploadAttachment",
          asUser((principal, { path }) =>
            Effect.flatMap(Effect.scoped(attachments.upload(principal, path.id, openUpload)), (attachment) => linked(principal, attachment)))
        )
        .handle(
          "getAttachment",
          asUser((principal, { path }) =>
            Effect.flatMap(attachments.get(principal, path.id, path.attachment_id), (attachment) => linked(principal, attachment)))
        )
        .handle("deleteAttachment", asUser((principal, { path }) => attachments.delete(principal, path.id, path.attachment_id)))
        .handle(
          "downloadAttachment",
          asUser((principal, { path }) =>
            Effect.flatMap(attachments.download(principal, path.id, path.attachment_id), (file) => downloadAnswer(file, unsatisfiable)))
        )
        .handle(
          "exportTranscript",
          asUser((principal, { path }) =>
            Effect.map(context.exportTranscript(principal, path.id), (srt) =>
              HttpServerResponse.text(srt, {
                contentType: "application/x-subrip; charset=utf-8",
                headers: { "content-disposition": `attachment; filename="transcript-${path.id}.srt"` }
              })))
        )
        .handle("nextSteps", asCaller((caller, { path, urlParams }) => context.nextSteps(caller.principal, caller.app.id, path.id, urlParams)))
        .handle("actionButtons", asCaller((caller, { path, urlParams }) =>
          context.actionButtons(caller.principal, caller.app.id, path.id, urlParams)))
        .handle(
          "triggerActionButton",
          asCaller((caller, { path }) => context.trigger(caller.principal, caller.app, path.id, path.button_id))
        )
    }))

export const PartnerFilesLive = HttpApiBuilder.group(Api, "partnerFiles", (handlers) =>
  Effect.gen(function*() {
    const attachments = yield* Attachments
    const links = yield* AttachmentLinks
    return handlers.handle("download", ({ path, urlParams }) =>
      Effect.gen(function*() {
        yield* asPartnerFailure(links.check({
          workspaceId: path.workspace_id,
          meetingId: path.meeting_id,
          attachmentId: path.attachment_id,
          ...urlParams
        }))
        const file = yield* asPartnerFailure(attachments.downloadLinked(path.workspace_id, path.meeting_id, path.attachment_id))
        return yield* downloadAnswer(file, unsatisfiable)
      }))
  }))
