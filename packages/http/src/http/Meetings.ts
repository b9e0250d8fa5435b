import { HttpApiBuilder } from "@effect/platform"
import { Meeting, Meetings, Participants, Users } from "@convene/core"
import { Effect } from "effect"
import { Api } from "../api/Api.js"
import { AddedParticipants } from "../api/Meetings.js"
import { CurrentPrincipal } from "../api/Security.js"
import { idempotently } from "./Idempotent.js"

export const MeetingsLive = HttpApiBuilder.group(Api, "meetings", (handlers) =>
  Effect.gen(function*() {
    const meetings = yield* Meetings
    const participants = yield* Participants
    const users = yield* Users
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(CurrentPrincipal, (principal) => meetings.list(principal, { status: urlParams.status }, urlParams)))
      .handle("create", ({ headers, payload }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          idempotently({
            key: headers["idempotency-key"],
            schema: Meeting,
            status: 201,
            work: meetings.create(principal, payload)
          })))
      .handle("search", ({ urlParams }) =>
        Effect.flatMap(CurrentPrincipal, (principal) => meetings.search(principal, urlParams, urlParams)))
      .handle("upcoming", ({ urlParams }) =>
        Effect.flatMap(CurrentPrincipal, (principal) => meetings.upcoming(principal, urlParams)))
      .handle("get", ({ path }) => Effect.flatMap(CurrentPrincipal, (principal) => meetings.get(principal, path.id)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentPrincipal, (principal) => meetings.update(principal, path.id, payload)))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentPrincipal, (principal) => meetings.delete(principal, path.id)))
      .handle("exportTranscript", ({ path }) =>
        Effect.flatMap(CurrentPrincipal, (principal) => meetings.exportTranscript(principal, path.id)))
      .handle("contacts", ({ path, urlParams }) =>
        Effect.flatMap(CurrentPrincipal, (principal) => meetings.contacts(principal, path.id, urlParams)))
      .handle("listParticipants", ({ path, urlParams }) =>
        Effect.flatMap(CurrentPrincipal, (principal) => participants.list(principal, path.id, urlParams)))
      .handle("addParticipants", ({ headers, path, payload }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          idempotently({
            key: headers["idempotency-key"],
            schema: AddedParticipants,
            status: 201,
            work: Effect.map(participants.add(principal, path.id, payload), (added) => ({ participants: added }))
          })))
      .handle("removeParticipant", ({ path }) =>
        Effect.flatMap(CurrentPrincipal, (principal) => participants.remove(principal, path.id, path.userId)))
      .handle("changeParticipantRole", ({ path, payload }) =>
        Effect.flatMap(CurrentPrincipal, (principal) => participants.changeRole(principal, path.id, path.userId, payload)))
      .handle("templates", ({ urlParams }) =>
        Effect.flatMap(CurrentPrincipal, (principal) => meetings.templates(principal, urlParams)))
      .handle("me", () => Effect.flatMap(CurrentPrincipal, (principal) => users.me(principal)))
  }))
