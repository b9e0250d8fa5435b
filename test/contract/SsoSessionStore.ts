import {
  IdpConfigId,
  PartnerStore,
  SsoSession,
  SsoSessionId,
  SsoSessionStore,
  SsoUser,
  type StorePorts,
  UserId,
  WorkspaceId
} from "@convene/core"
import { addEqualityTesters, expect, layer } from "@effect/vitest"
import { Effect, type Layer, Option } from "effect"
import { randomBytes } from "node:crypto"
import { minutes, uuid } from "./fixtures.js"
import { partnerApp } from "./PartnerStore.js"

const sessionId = () => SsoSessionId.make(randomBytes(16).toString("base64url"))

/** A pending session of a new app, unless `fields` say otherwise. */
const seed = (fields: Partial<SsoSession> = {}) =>
  Effect.gen(function*() {
    const app = partnerApp()
    yield* (yield* PartnerStore).insert(app)
    const session = new SsoSession({
      id: sessionId(),
      partner_app_id: app.id,
      idp_config_id: IdpConfigId.make(uuid()),
      target: "web",
      state: "pending",
      state_hash: `state-${uuid()}`,
      nonce_hash: `nonce-${uuid()}`,
      sealed_code_verifier: `sealed-${uuid()}`,
      created_at: minutes(0),
      expires_at: minutes(10),
      finished_at: null,
      consumed_at: null,
      result: null,
      error: null,
      error_description: null,
      ...fields
    })
    yield* (yield* SsoSessionStore).insert(session)
    return session
  })

const ann = new SsoUser({
  user_id: UserId.make(uuid()),
  email: "ann@corp.example",
  name: "Ann Lee",
  workspace_id: WorkspaceId.make(uuid())
})

export const suite = (name: string, storeLayer: Layer.Layer<StorePorts, unknown>) => {
  addEqualityTesters()

  layer(storeLayer)(`SsoSessionStore (${name})`, (it) => {
    it.effect("insert, then get by id and by the state's hash answer every field", () =>
      Effect.gen(function*() {
        const store = yield* SsoSessionStore
        const session = yield* seed({ target: "desktop" })
        expect(yield* store.get(session.id)).toEqual(Option.some(session))
        expect(yield* store.getByStateHash(session.state_hash)).toEqual(Option.some(session))
        expect(Option.isNone(yield* store.get(sessionId()))).toBe(true)
        expect(Option.isNone(yield* store.getByStateHash(`state-${uuid()}`))).toBe(true)
      }))

    it.effect("finish completes or fails a pending session once, only before it expires", () =>
      Effect.gen(function*() {
        const store = yield* SsoSessionStore
        const completed = yield* seed()
        expect(yield* store.finish(completed.id, { state: "completed", result: ann }, minutes(3), minutes(13))).toBe(true)
        expect(yield* store.get(completed.id)).toEqual(Option.some(
          new SsoSession({ ...completed, state: "completed", result: ann, finished_at: minutes(3), expires_at: minutes(13) })
        ))
        // Finished: a second finish (a replayed callback) changes nothing.
        expect(yield* store.finish(completed.id, { state: "failed", error: "idp_error", error_description: "no" }, minutes(4), minutes(14)))
          .toBe(false)
        expect(Option.getOrThrow(yield* store.get(completed.id)).state).toBe("completed")

        const failed = yield* seed()
        expect(yield* store.finish(failed.id, { state: "failed", error: "domain_not_allowed", error_description: "words" }, minutes(9), minutes(19)))
          .toBe(true)
        expect(Option.getOrThrow(yield* store.get(failed.id))).toMatchObject({
          state: "failed",
          error: "domain_not_allowed",
          error_description: "words",
          result: null
        })

        const late = yield* seed()
        expect(yield* store.finish(late.id, { state: "completed", result: ann }, minutes(10), minutes(20))).toBe(false)
        expect(yield* store.get(late.id)).toEqual(Option.some(late))
        expect(yield* store.finish(sessionId(), { state: "completed", result: ann }, minutes(1), minutes(11))).toBe(false)
      }))

    it.effect("of racing finishes exactly one wins", () =>
      Effect.gen(function*() {
        const store = yield* SsoSessionStore
        const session = yield* seed()
        const answers = yield* Effect.all(
          Array.from({ length: 8 }, (_, i) =>
            store.finish(session.id, { state: "failed", error: "idp_error", error_description: `attempt ${i}` }, minutes(1), minutes(11))),
          { concurrency: "unbounded" }
        )
        expect(answers.filter((won) => won)).toHaveLength(1)
        expect(Option.getOrThrow(yield* store.get(session.id)).error_description).toBe(`attempt ${answers.indexOf(true)}`)
      }))

    it.effect("consume answers a finished session once, before it expires; never a pending one", () =>
      Effect.gen(function*() {
        const store = yield* SsoSessionStore
        const pending = yield* seed()
        expect(Option.isNone(yield* store.consume(pending.id, minutes(1)))).toBe(true)
        const session = yield* seed()
        yield* store.finish(session.id, { state: "completed", result: ann }, minutes(2), minutes(12))
        const answers = yield* Effect.all(Array.from({ length: 6 }, () => store.consume(session.id, minutes(5))), { concurrency: "unbounded" })
        const won = answers.filter(Option.isSome)
        expect(won).toHaveLength(1)
        expect(won[0]!.value).toMatchObject({ id: session.id, state: "completed", result: ann, consumed_at: minutes(5) })
        expect(Option.getOrThrow(yield* store.get(session.id)).consumed_at).toEqual(minutes(5))
        const expired = yield* seed()
        yield* store.finish(expired.id, { state: "failed", error: "idp_error", error_description: null }, minutes(2), minutes(12))
        expect(Option.isNone(yield* store.consume(expired.id, minutes(12)))).toBe(true)
        expect(Option.isNone(yield* store.consume(sessionId(), minutes(1)))).toBe(true)
      }))

    it.effect("purge deletes the sessions that expired before the instant", () =>
      Effect.gen(function*() {
        const store = yield* SsoSessionStore
        const old = yield* seed({ expires_at: minutes(-2000) })
        const recent = yield* seed({ expires_at: minutes(-5) })
        yield* store.purge(minutes(-1000))
        expect(Option.isNone(yield* store.get(old.id))).toBe(true)
        expect(yield* store.get(recent.id)).toEqual(Option.some(recent))
      }))
  })
}
