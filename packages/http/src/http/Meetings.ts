import * as HttpApiBuilder from "@effect/platform/HttpApiBuilder"
import { Meetings, Participants } from "@convene/core"
import { Effect } from "effect"
import { Api } from "@convene/api/Api"
import { MeetingsApi } from "@convene/api/Meetings"
import { encoded } from "./Encoded.js"
import { asCaller } from "./Security.js"

const answers = {
  list: encoded(MeetingsApi, "list"),
  search: encoded(MeetingsApi, "search"),
  upcoming: encoded(MeetingsApi, "upcoming"),
  get: encoded(MeetingsApi, "get"),
  listParticipants: encoded(MeetingsApi, "listParticipants")
}

export const MeetingsLive = HttpApiBuilder.group(Api, "meetings", (handlers) =>
  Effect.gen(function*() {
    const meetings = yield* Meetings
    const participants = yield* Participants
    return handlers
      .handle("list", asCaller((principal, { urlParams }) => Effect.map(meetings.list(principal, urlParams, urlParams), answers.list)))
      .handle("create", asCaller((principal, { payload }) => meetings.create(principal, payload)))
      .handle(
        "search",
        asCaller((principal, { urlParams }) => Effect.map(meetings.search(principal, urlParams, urlParams), answers.search))
      )
      .handle("upcoming", asCaller((principal, { urlParams }) => Effect.map(meetings.upcoming(principal, urlParams), answers.upcoming)))
      .handle("get", asCaller((principal, { path }) => Effect.map(meetings.get(principal, path.id), answers.get)))
      .handle("update", asCaller((principal, { path, payload }) => meetings.update(principal, path.id, payload)))
      .handle("delete", asCaller((principal, { path }) => meetings.delete(principal, path.id)))
      .handle("exportTranscript", asCaller((principal, { path }) => meetings.exportTranscript(principal, path.id)))
      .handle("contacts", asCaller((principal, { path, urlParams }) => meetings.contacts(principal, path.id, urlParams)))
      .handle(
        "listParticipants",
        asCaller((principal, { path, urlParams }) => Effect.map(participants.list(principal, path.id, urlParams), answers.listParticipants))
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
