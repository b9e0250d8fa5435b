import { HttpApiBuilder } from "@effect/platform"
import { Meetings, Participants } from "@convene/core"
import { Effect } from "effect"
import { Api } from "@convene/api/Api"
import { asCaller } from "./Security.js"

export const MeetingsLive = HttpApiBuilder.group(Api, "meetings", (handlers) =>
  Effect.gen(function*() {
    const meetings = yield* Meetings
    const participants = yield* Participants
    return handlers
      .handle("list", asCaller((principal, { urlParams }) => meetings.list(principal, urlParams, urlParams)))
      .handle("create", asCaller((principal, { payload }) => meetings.create(principal, payload)))
      .handle("search", asCaller((principal, { urlParams }) => meetings.search(principal, urlParams, urlParams)))
      .handle("upcoming", asCaller((principal, { urlParams }) => meetings.upcoming(principal, urlParams)))
      .handle("get", asCaller((principal, { path }) => meetings.get(principal, path.id)))
      .handle("update", asCaller((principal, { path, payload }) => meetings.update(principal, path.id, payload)))
      .handle("delete", asCaller((principal, { path }) => meetings.delete(principal, path.id)))
      .handle("exportTranscript", asCaller((principal, { path }) => meetings.exportTranscript(principal, path.id)))
      .handle("contacts", asCaller((principal, { path, urlParams }) => meetings.contacts(principal, path.id, urlParams)))
      .handle(
        "listParticipants",
        asCaller((principal, { path, urlParams }) => participants.list(principal, path.id, urlParams))
      )
      .handle(
        "addParticipants",
        asCaller((principal, { path, payload }) =>
          Effect.map(participants.add(principal, path.id, payload), (added) => ({ participants: added })))
      )
      .handle("removeParticipant", asCaller((principal, { path }) => participants.remove(principal, path.id, path.userId)))
      .handle(
        "changeParticipantRole",
        asCaller((principal, { path, payload }) => participants.changeRole(principal, path.id, path.userId, payload))
      )
      .handle("templates", asCaller((principal, { urlParams }) => meetings.templates(principal, urlParams)))
  }))
