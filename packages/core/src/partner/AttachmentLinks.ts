/**
 * Pre-signed download URLs of attachments (decisions.md, partner attachments): an absolute URL under the base URL,
 * valid 15 minutes, usable without a bearer token, for that one attachment. The URL names the workspace, the
 * meeting and the attachment, its expiry and the key it was signed with; the signature is HMAC-SHA256 over all of
 * them and the attachment's SHA-256, with a key derived from the installation's active token signing key (so every
 * process sharing the store checks what any of them signed; a link made before a rotation is checked with the
 * retired key, which SigningKeys keeps for an hour, longer than a link lives).
 * Any change to the URL, a link past its expiry, or an attachment that is gone or changed, is refused.
 */
import { Context, DateTime, Duration, Effect, Layer, Option } from "effect"
import { Crypto } from "../ports/Crypto.js"
import { NotFound } from "../shared/Errors.js"
import type { MeetingId, WorkspaceId } from "../shared/Ids.js"
import { now } from "../shared/Time.js"
import type { Attachment, AttachmentId } from "../attachments/Attachment.js"
import { AttachmentStore } from "../attachments/AttachmentStore.js"
import { SigningKeys } from "../oauth/SigningKeys.js"
import { fn } from "../shared/Span.js"

/** How long a pre-signed URL is valid. */
export const downloadLinkLifetime = Duration.minutes(15)

const purpose = "attachment-download-url"

/** The parts of a pre-signed URL, as the host read them from the request. */
export interface LinkParts {
  readonly workspaceId: WorkspaceId
  readonly meetingId: MeetingId
  readonly attachmentId: AttachmentId
  readonly expires: string
  readonly kid: string
  readonly signature: string
}

/** The path of the download link of an attachment (the host serves it). */
export const linkPath = (workspaceId: string, meetingId: string, attachmentId: string) =>
  `/v1/partner/files/${workspaceId}/${meetingId}/${attachmentId}`

const make = Effect.gen(function*() {
  const keys = yield* SigningKeys
  const crypto = yield* Crypto
  const attachments = yield* AttachmentStore

  const payload = (parts: Omit<LinkParts, "signature">, sha256: string) =>
    [parts.workspaceId, parts.meetingId, parts.attachmentId, sha256, parts.expires, parts.kid].join("\n")

  /** A fresh pre-signed URL of the attachment under `baseUrl`, and when it expires. */
  const mint = fn("AttachmentLinks.mint")(function*(baseUrl: string, attachment: Attachment, workspaceId: WorkspaceId) {
    const key = yield* keys.derivedKey(purpose)
    if (key === undefined) return yield* Effect.dieMessage("no active signing key")
    const expiresAt = DateTime.addDuration(yield* now, downloadLinkLifetime)
    const expires = String(Math.floor(DateTime.toEpochMillis(expiresAt) / 1000))
    const parts = { workspaceId, meetingId: attachment.meeting_id, attachmentId: attachment.id, expires, kid: key.kid }
    const signature = yield* crypto.hmacSha256(key.secret, payload(parts, attachment.sha256))
    const query = `expires=${expires}&kid=${encodeURIComponent(key.kid)}&signature=${signature}`
    return {
      download_url: `${baseUrl}${linkPath(workspaceId, attachment.meeting_id, attachment.id)}?${query}`,
      download_url_expires_at: DateTime.unsafeMake(Number(expires) * 1000)
    }
  })

  /**
   * Whether the link is valid now: its signature (compared in constant time) over what it names and the
   * attachment's current SHA-256, and its expiry. Every refusal is the same 404, so a link tells nothing it does
   * not grant.
   */
  const check = fn("AttachmentLinks.check")(function*(parts: LinkParts) {
    const refused = NotFound.of("attachment", parts.attachmentId)
    if (!/^\d{1,12}$/.test(parts.expires) || !/^[0-9a-f]{64}$/.test(parts.signature) || parts.kid.length > 200) {
      return yield* Effect.fail(refused)
    }
    const row = yield* attachments.get(parts.workspaceId, parts.attachmentId)
    const key = yield* keys.derivedKey(purpose, parts.kid)
    const expected = key === undefined || Option.isNone(row)
      ? "0".repeat(64)
      : yield* crypto.hmacSha256(key.secret, payload(parts, row.value.sha256))
    if (!crypto.timingSafeEqual(expected, parts.signature) || Option.isNone(row) || key === undefined) return yield* Effect.fail(refused)
    if (Number(parts.expires) * 1000 <= DateTime.toEpochMillis(yield* now)) return yield* Effect.fail(refused)
  })

  return { mint, check } as const
})

export class AttachmentLinks extends Context.Tag("@convene/core/AttachmentLinks")<AttachmentLinks, Effect.Effect.Success<typeof make>>() {
  static readonly layer: Layer.Layer<AttachmentLinks, never, SigningKeys | Crypto | AttachmentStore> = Layer.effect(AttachmentLinks, make)
}
