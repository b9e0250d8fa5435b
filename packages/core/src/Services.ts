/**
 * Every core service, wired to each other. Provide a store adapter (StorePorts) and the Crypto and
 * PasswordHasher ports, and the whole domain runs: this is what the HTTP host and embedders use.
 */
import { Layer } from "effect"
import { ActionItems } from "./actions/ActionItems.js"
import { AgendaItems } from "./agenda/AgendaItems.js"
import * as Contents from "./Contents.js"
import { Idempotency } from "./idempotency/Idempotency.js"
import { Authentication } from "./identity/Authentication.js"
import { Tokens } from "./identity/Tokens.js"
import { Users } from "./identity/Users.js"
import { MeetingAccess } from "./meetings/MeetingAccess.js"
import { Meetings } from "./meetings/Meetings.js"
import { Participants } from "./meetings/Participants.js"
import type { Crypto, PasswordHasher } from "./ports/Crypto.js"
import type { StorePorts } from "./StorePorts.js"
import { Workspaces } from "./workspaces/Workspaces.js"

export type Services =
  | Workspaces
  | Users
  | Tokens
  | Authentication
  | Meetings
  | Participants
  | AgendaItems
  | ActionItems
  | Idempotency

// Contents.layer (the cascades) is one layer value: provided twice below, it is built once.
const identity = Tokens.layer.pipe(
  Layer.provideMerge(Users.layer),
  Layer.provideMerge(Workspaces.layer),
  Layer.provide(Contents.layer)
)

const meetings = Layer.mergeAll(Meetings.layer, Participants.layer, AgendaItems.layer, ActionItems.layer).pipe(
  Layer.provide(MeetingAccess.layer),
  Layer.provide(Contents.layer),
  Layer.provide(identity)
)

export const layer: Layer.Layer<Services, never, StorePorts | Crypto | PasswordHasher> = Layer.mergeAll(
  identity,
  meetings,
  Authentication.layer,
  Idempotency.layer
)
