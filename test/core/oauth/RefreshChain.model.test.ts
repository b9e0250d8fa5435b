/**
 * A model of one grant's token chain (oauth/AuthorizationServer.ts), checked against the real server on the
 * memory store with fast-check's model-based testing: any sequence of refreshes, replays of rotated refresh
 * tokens, RFC 7009 revocations of any token of the chain and clock moves.
 *
 * The invariant, checked after every command on every token the chain ever issued:
 * - once the chain is revoked (a replay or a revocation), no access token authenticates and no refresh token
 *   refreshes, ever again;
 * - until then, each access token authenticates for exactly its hour, and exactly one refresh token works: the
 *   newest, for 30 days from its issue.
 * Whether a refresh token works is asked inside a unit of work that is then rolled back, so asking changes
 * nothing (asking with a rotated one would otherwise revoke the chain).
 */
import {
  AuthorizationServer,
  type LiveSession,
  type OAuthError,
  type TokenResponse,
  Transactor,
  type Unauthenticated
} from "@convene/core"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Data, Duration, Effect, Exit, FastCheck, Layer, ManagedRuntime, TestClock, TestContext } from "effect"
import { bearer, OAuthLive, signedIn, tokensFor } from "./fixtures.js"

const accessMinutes = 60
const refreshMinutes = 30 * 24 * 60
const scope = "meetings:read action-items:write"

const runtime = ManagedRuntime.make(OAuthLive.pipe(Layer.provideMerge(TestContext.TestContext)))
type Services = ManagedRuntime.ManagedRuntime.Context<typeof runtime>

const run = <A, E>(effect: Effect.Effect<A, E, Services>) => runtime.runPromise(effect)

/** The outcome of `effect` had it run, with everything it wrote to the store undone. */
class RolledBack<A, E> extends Data.TaggedError("RolledBack")<{ readonly exit: Exit.Exit<A, E> }> {}
const whatIf = <A, E>(effect: Effect.Effect<A, E, Services>) =>
  Effect.gen(function*() {
    const transactor = yield* Transactor
    const undone = yield* Effect.flip(transactor.withTransaction(
      Effect.flatMap(Effect.exit(effect), (exit) => Effect.fail(new RolledBack({ exit })))
    ))
    return undone.exit
  })

let live: LiveSession

/** What should be true of the chain: when each of its tokens was issued (model minutes), and whether it was revoked. */
interface Model {
  now: number
  revoked: boolean
  readonly access: Array<number>
  readonly refresh: Array<number>
}

/** The chain's tokens, in the order the model lists their issue. */
interface Real {
  readonly access: Array<string>
  readonly refresh: Array<string>
}

const errorOf = <A, E>(exit: Exit.Exit<A, E>): E | undefined =>
  Exit.isFailure(exit) && exit.cause._tag === "Fail" ? exit.cause.error : undefined

const expectInvalidGrant = (exit: Exit.Exit<TokenResponse, OAuthError>, what: string) => {
  expect(Exit.isFailure(exit), what).toBe(true)
  expect(errorOf(exit), what).toMatchObject({ _tag: "OAuthError", error: "invalid_grant" })
}

/** The invariant: every token of the chain does exactly what the model says. */
const checkChain = (model: Model, real: Real) =>
  run(Effect.gen(function*() {
    const server = yield* AuthorizationServer
    for (const [index, token] of real.access.entries()) {
      const exit = yield* Effect.exit(bearer(token))
      const what = `access token ${index} (issued at ${model.access[index]}, now ${model.now}, revoked ${model.revoked})`
      if (!model.revoked && model.now < model.access[index]! + accessMinutes) {
        expect(Exit.isSuccess(exit), what).toBe(true)
        if (Exit.isSuccess(exit)) expect(exit.value).toMatchObject({ scopes: ["meetings:read", "action-items:write"], client_id: "convene-cli" })
      } else {
        const error: Unauthenticated | undefined = errorOf(exit)
        expect(error, what).toMatchObject({ _tag: "Unauthenticated", reason: model.revoked ? "revoked" : "expired" })
      }
    }
    const newest = real.refresh.length - 1
    for (const [index, token] of real.refresh.entries()) {
      const exit = yield* whatIf(server.refresh({ refresh_token: token }))
      const what = `refresh token ${index} of ${newest} (issued at ${model.refresh[index]}, now ${model.now}, revoked ${model.revoked})`
      if (!model.revoked && index === newest && model.now < model.refresh[index]! + refreshMinutes) {
        expect(Exit.isSuccess(exit), what).toBe(true)
      } else {
        expectInvalidGrant(exit, what)
      }
    }
  }))

type ChainCommand = FastCheck.AsyncCommand<Model, Real>

class Refresh implements ChainCommand {
  check = () => true
  async run(model: Model, real: Real) {
    const exit = await run(Effect.exit(Effect.flatMap(AuthorizationServer, (server) => server.refresh({ refresh_token: real.refresh.at(-1)! }))))
    if (!model.revoked && model.now < model.refresh.at(-1)! + refreshMinutes) {
      expect(Exit.isSuccess(exit), "refreshing with the newest refresh token").toBe(true)
      if (Exit.isSuccess(exit)) {
        real.access.push(exit.value.access_token)
        real.refresh.push(exit.value.refresh_token)
        model.access.push(model.now)
        model.refresh.push(model.now)
      }
    } else {
      expectInvalidGrant(exit, "refreshing with the newest refresh token of a revoked or expired chain")
    }
    await checkChain(model, real)
  }
  toString = () => "Refresh"
}

class Replay implements ChainCommand {
  constructor(readonly pick: number) {}
  check = (model: Readonly<Model>) => model.refresh.length > 1
  async run(model: Model, real: Real) {
    const rotated = this.pick % (real.refresh.length - 1)
    const exit = await run(Effect.exit(Effect.flatMap(AuthorizationServer, (server) => server.refresh({ refresh_token: real.refresh[rotated]! }))))
    expectInvalidGrant(exit, `replaying rotated refresh token ${rotated}`)
    model.revoked = true
    await checkChain(model, real)
  }
  toString = () => `Replay(${this.pick})`
}

class Revoke implements ChainCommand {
  constructor(readonly pick: number) {}
  check = () => true
  async run(model: Model, real: Real) {
    const tokens = [...real.access, ...real.refresh]
    await run(Effect.flatMap(AuthorizationServer, (server) => server.revoke(tokens[this.pick % tokens.length]!, live)))
    model.revoked = true
    await checkChain(model, real)
  }
  toString = () => `Revoke(${this.pick})`
}

class AdvanceTime implements ChainCommand {
  constructor(readonly minutes: number) {}
  check = () => true
  async run(model: Model, real: Real) {
    await run(TestClock.adjust(Duration.minutes(this.minutes)))
    model.now += this.minutes
    await checkChain(model, real)
  }
  toString = () => `AdvanceTime(${this.minutes})`
}

const commands = [
  FastCheck.constant(new Refresh()),
  FastCheck.nat(50).map((pick) => new Replay(pick)),
  FastCheck.nat(50).map((pick) => new Revoke(pick)),
  FastCheck.oneof(
    // Within an access token's hour, across it, and across a refresh token's 30 days.
    { arbitrary: FastCheck.integer({ min: 1, max: 45 }), weight: 3 },
    { arbitrary: FastCheck.constantFrom(accessMinutes - 1, accessMinutes, accessMinutes + 1), weight: 1 },
    { arbitrary: FastCheck.integer({ min: refreshMinutes - 3 * 24 * 60, max: refreshMinutes + 24 * 60 }), weight: 1 },
    { arbitrary: FastCheck.constantFrom(refreshMinutes - 1, refreshMinutes), weight: 1 }
  ).map((minutes) => new AdvanceTime(minutes))
]

describe("a grant's refresh chain (model-based)", () => {
  beforeAll(async () => {
    live = (await run(signedIn())).live
  })
  afterAll(() => runtime.dispose())

  it("matches the model under any sequence of refreshes, replays, revocations and clock moves", async () => {
    await FastCheck.assert(
      FastCheck.asyncProperty(FastCheck.commands(commands, { maxCommands: 20 }), async (sequence) => {
        const first = await run(tokensFor({ live, scope }))
        const model: Model = { now: 0, revoked: false, access: [0], refresh: [0] }
        const real: Real = { access: [first.access_token], refresh: [first.refresh_token] }
        await FastCheck.asyncModelRun(() => ({ model, real }), sequence)
      }),
      { numRuns: 150 }
    )
  }, 60_000)
})
