/**
 * What other rooms keep on users and credentials: participant rows, owned meetings, agenda presenters,
 * talking points and action item assignments point at a user; idempotency records are kept per credential.
 * The identity room lets go of them inside its own transactions, before it deletes a user or credentials,
 * without importing those rooms; core's composition root (Contents.ts) implements it, so what happens to them
 * is decided once, in core, for every store.
 */
import { Context, type Effect } from "effect"
import type { CredentialId, UserId, WorkspaceId } from "../shared/Ids.js"

export class IdentityReferences extends Context.Tag("@convene/core/IdentityReferences")<IdentityReferences, {
  /**
   * Lets go of the user everywhere else: their participant rows and their private talking points are deleted;
   * meetings they own lose their owner (and stay, like a meeting created with a workspace API key); agenda items
   * lose them as a presenter; action items assigned to them become unassigned.
   */
  readonly detachUser: (workspaceId: WorkspaceId, userId: UserId) => Effect.Effect<void>
  /** Deletes what other rooms keep per credential (idempotency records) for credentials that are going. */
  readonly forgetCredentials: (ids: ReadonlyArray<CredentialId>) => Effect.Effect<void>
}>() {}
