/**
 * Presenters, as agenda items and backlog items keep them: user ids of the caller's workspace, shown with each
 * user's name and e-mail (`presenter_details`) as long as the user exists.
 */
import { Effect } from "effect"
import { subjectOf } from "../identity/Access.js"
import type { Principal, User } from "../identity/Identity.js"
import type { UserStore } from "../identity/IdentityStore.js"
import { ValidationError } from "../shared/Errors.js"
import type { UserId, WorkspaceId } from "../shared/Ids.js"
import { trusted } from "../shared/Trusted.js"
import { PresenterDetail } from "./AgendaItem.js"

/** The presenter rules over the workspace's users. */
export const presentersOf = (users: UserStore["Type"]) => {
  /** The workspace users among `ids`, by id. */
  const peopleOf = (workspaceId: WorkspaceId, ids: ReadonlyArray<UserId>) =>
    ids.length === 0
      ? Effect.succeed(new Map<string, User>())
      : Effect.map(users.getMany(workspaceId, [...new Set(ids)]), (people) => new Map(people.map((user) => [user.id, user])))

  /** Each presenter must be a user of the caller's workspace (400 naming `presenters[i]` otherwise). */
  const checkPresenters = (principal: Principal, presenters: ReadonlyArray<UserId> | undefined) =>
    Effect.gen(function*() {
      if (presenters === undefined) return
      const known = yield* peopleOf(principal.workspace_id, presenters)
      for (const [index, id] of presenters.entries()) {
        if (!known.has(id)) {
          return yield* Effect.fail(ValidationError.of(`presenters[${index}]`, `${id} is not a user of this workspace`))
        }
      }
    })

  /**
   * Rows of items with presenters and private talking points (agenda items, backlog items) as the caller sees them:
   * their own talking points and the presenters' details, each read once for all the rows.
   */
  const viewOf = <Id extends string, Row extends { readonly id: Id; readonly presenters: ReadonlyArray<UserId> }, A>(
    talkingPoints: (ids: ReadonlyArray<Id>, subject: string) => Effect.Effect<ReadonlyMap<Id, ReadonlyArray<string>>>,
    present: (row: Row, points: ReadonlyMap<Id, ReadonlyArray<string>>, people: ReadonlyMap<string, User>) => A
  ) =>
  (principal: Principal, rows: ReadonlyArray<Row>): Effect.Effect<Array<A>> =>
    Effect.gen(function*() {
      if (rows.length === 0) return []
      const points = yield* talkingPoints(rows.map((row) => row.id), subjectOf(principal))
      const people = yield* peopleOf(principal.workspace_id, rows.flatMap((row) => row.presenters))
      return rows.map((row) => present(row, points, people))
    })

  return { peopleOf, checkPresenters, viewOf } as const
}

/** Each presenter with the details of the user (only the id of a user who no longer exists). */
export const presenterDetails = (presenters: ReadonlyArray<UserId>, people: ReadonlyMap<string, User>) =>
  presenters.map((id) => {
    const user = people.get(id)
    return user === undefined
      ? new PresenterDetail({ user_id: id }, trusted)
      : new PresenterDetail({ user_id: id, name: user.name, email: user.email }, trusted)
  })
