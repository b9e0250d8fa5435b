/**
 * Browser sessions (oauth/Sessions.ts), on the test clock: signing in with e-mail and password, the one answer
 * for a wrong e-mail or a wrong password, the failed-attempt limits per account (5 in 15 minutes) and per
 * client address (20 in 15 minutes), the session's 12 hours, signing out, and a deleted user's session.
 */
import { CreateUser, PasswordHasher, Sessions, SignInRefused, Users } from "@convene/core"
import { describe, expect, layer } from "@effect/vitest"
import { DateTime, Effect, Layer, Option, Ref, TestClock } from "effect"
import { accountFor, freshAddress, OAuthLive, password } from "./fixtures.js"
import { freshEmail } from "../fixtures.js"

const refused = new SignInRefused({ message: "wrong e-mail address or password" })

describe("Sessions", () => {
  layer(OAuthLive)((it) => {
    it.effect("signing in with the right password gives a session token that resolves to the session and its user", () =>
      Effect.gen(function*() {
        const sessions = yield* Sessions
        const { user, workspace } = yield* accountFor({ role: "ADMIN" })
        // The address is found in any case and with spaces around it.
        const signed = yield* sessions.signIn({ email: `  ${user.email.toUpperCase()} `, password, address: freshAddress() })
        expect(signed.token).toMatch(/^svc_ses_v1_[A-Za-z0-9_-]{43}$/)
        expect(signed.user).toEqual(user)
        expect(signed.session).toMatchObject({ user_id: user.id, workspace_id: workspace.id, revoked_at: null })
        const resolved = yield* sessions.resolve(signed.token)
        expect(Option.map(resolved, ({ session, user }) => ({ session: session.id, user: user.id }))).toEqual(
          Option.some({ session: signed.session.id, user: user.id })
        )
        // Two sign-ins are two sessions.
        const again = yield* sessions.signIn({ email: user.email, password, address: freshAddress() })
        expect(again.token).not.toBe(signed.token)
        expect(again.session.id).not.toBe(signed.session.id)
      }))

    it.effect("a wrong password, an unknown e-mail or no e-mail at all get the same SignInRefused", () =>
      Effect.gen(function*() {
        const sessions = yield* Sessions
        const { user } = yield* accountFor()
        const attempts = [
          { email: user.email, password: "not the password" },
          { email: user.email, password: password.toUpperCase() },
          { email: freshEmail("nobody"), password },
          { email: "not an address", password },
          { email: "", password: "" }
        ]
        for (const attempt of attempts) {
          expect(yield* Effect.flip(sessions.signIn({ ...attempt, address: freshAddress() }))).toEqual(refused)
        }
      }))

    it.effect("every attempt checks a password, whether the account exists or not (the answer takes as long)", () =>
      Effect.gen(function*() {
        const hasher = yield* PasswordHasher
        const checks = yield* Ref.make(0)
        const counting = Layer.succeed(PasswordHasher, PasswordHasher.of({
          hash: hasher.hash,
          verify: (candidate, hash) => Effect.zipRight(Ref.update(checks, (n) => n + 1), hasher.verify(candidate, hash))
        }))
        const sessions = yield* Effect.provide(Sessions, Sessions.layer.pipe(Layer.provide(counting)))
        const { user, workspace } = yield* accountFor()
        const passwordless = yield* (yield* Users).create(workspace.id, CreateUser.make({ email: freshEmail(), name: "Bea", role: "MEMBER" }))
        for (const [email, tried] of [
          [user.email, password],
          [user.email, "wrong guess"],
          [freshEmail("nobody"), password],
          ["not an address", password],
          [passwordless.email, password]
        ] as const) {
          const before = yield* Ref.get(checks)
          yield* Effect.either(sessions.signIn({ email, password: tried, address: freshAddress() }))
          expect(yield* Ref.get(checks), email).toBe(before + 1)
        }
      }))

    it.effect("a user without a password cannot sign in", () =>
      Effect.gen(function*() {
        const sessions = yield* Sessions
        const { workspace } = yield* accountFor()
        const passwordless = yield* (yield* Users).create(workspace.id, CreateUser.make({ email: freshEmail(), name: "Bea", role: "MEMBER" }))
        expect(yield* Effect.flip(sessions.signIn({ email: passwordless.email, password: "", address: freshAddress() }))).toEqual(refused)
        expect(yield* Effect.flip(sessions.signIn({ email: passwordless.email, password, address: freshAddress() }))).toEqual(refused)
      }))

    it.effect("after 5 failures for an account within 15 minutes the next attempt is throttled, right password or not, until the window has passed", () =>
      Effect.gen(function*() {
        const sessions = yield* Sessions
        const { user } = yield* accountFor()
        // Each attempt from another address: only the account's count can be what stops it.
        for (let attempt = 0; attempt < 5; attempt++) {
          expect(yield* Effect.flip(sessions.signIn({ email: user.email, password: "wrong guess", address: freshAddress() }))).toEqual(refused)
          yield* TestClock.adjust("1 minute")
        }
        // The last failure was at 4:00; now it is 5:00.
        for (const tried of [password, "wrong guess"]) {
          expect(yield* Effect.flip(sessions.signIn({ email: user.email, password: tried, address: freshAddress() }))).toMatchObject({
            _tag: "SignInThrottled",
            retry_after_seconds: 900
          })
        }
        // The same account in another case is the same account.
        expect(yield* Effect.flip(sessions.signIn({ email: user.email.toUpperCase(), password, address: freshAddress() }))).toMatchObject({
          _tag: "SignInThrottled"
        })
        // 14:59 after the first failure, still 5 within the window.
        yield* TestClock.adjust("599 seconds")
        expect(yield* Effect.flip(sessions.signIn({ email: user.email, password, address: freshAddress() }))).toMatchObject({
          _tag: "SignInThrottled"
        })
        // 15:01 after the first failure: only 4 remain in the window, and the right password works.
        yield* TestClock.adjust("2 seconds")
        const signed = yield* sessions.signIn({ email: user.email, password, address: freshAddress() })
        expect(Option.isSome(yield* sessions.resolve(signed.token))).toBe(true)
      }))

    it.effect("throttling one account leaves the others alone", () =>
      Effect.gen(function*() {
        const sessions = yield* Sessions
        const { user, workspace } = yield* accountFor()
        const other = yield* accountFor({ workspaceId: workspace.id })
        const address = freshAddress()
        for (let attempt = 0; attempt < 5; attempt++) {
          yield* Effect.flip(sessions.signIn({ email: user.email, password: "wrong guess", address }))
        }
        expect(yield* Effect.flip(sessions.signIn({ email: user.email, password, address }))).toMatchObject({ _tag: "SignInThrottled" })
        yield* sessions.signIn({ email: other.user.email, password, address })
      }))

    it.effect("a successful sign-in clears the account's failures", () =>
      Effect.gen(function*() {
        const sessions = yield* Sessions
        const { user } = yield* accountFor()
        for (let round = 0; round < 2; round++) {
          for (let attempt = 0; attempt < 4; attempt++) {
            expect(yield* Effect.flip(sessions.signIn({ email: user.email, password: "wrong guess", address: freshAddress() }))).toEqual(refused)
          }
          // 4, then 8 failures within the window had they not been cleared.
          yield* sessions.signIn({ email: user.email, password, address: freshAddress() })
        }
      }))

    it.effect("20 failures from one address, on any accounts, throttle that address and only that address", () =>
      Effect.gen(function*() {
        const sessions = yield* Sessions
        const { user } = yield* accountFor()
        const address = freshAddress()
        const fail = (attempt: number) =>
          // Each attempt on another account: no account reaches its own limit.
          Effect.flip(sessions.signIn({ email: freshEmail(`guess${attempt}`), password, address }))
        for (let attempt = 0; attempt < 19; attempt++) expect(yield* fail(attempt)).toEqual(refused)
        // 19 do not throttle it yet; an account signing in from there clears its own failures, not the address's.
        yield* sessions.signIn({ email: user.email, password, address })
        expect(yield* fail(19)).toEqual(refused)
        expect(yield* Effect.flip(sessions.signIn({ email: user.email, password, address }))).toMatchObject({
          _tag: "SignInThrottled",
          retry_after_seconds: 900
        })
        // From another address the account signs in.
        yield* sessions.signIn({ email: user.email, password, address: freshAddress() })
        // The address is free again once the window has passed.
        yield* TestClock.adjust("16 minutes")
        yield* sessions.signIn({ email: user.email, password, address })
      }))

    it.effect("a session ends 12 hours after sign-in", () =>
      Effect.gen(function*() {
        const sessions = yield* Sessions
        const { user } = yield* accountFor()
        const signed = yield* sessions.signIn({ email: user.email, password, address: freshAddress() })
        expect(DateTime.distance(signed.session.created_at, signed.session.expires_at)).toBe(12 * 3_600_000)
        yield* TestClock.adjust("43199 seconds") // 11:59:59
        expect(Option.isSome(yield* sessions.resolve(signed.token))).toBe(true)
        yield* TestClock.adjust("1 second")
        expect(yield* sessions.resolve(signed.token)).toEqual(Option.none())
      }))

    it.effect("signing out ends the session (and only that one); signing out again or with no session is nothing", () =>
      Effect.gen(function*() {
        const sessions = yield* Sessions
        const { user } = yield* accountFor()
        const first = yield* sessions.signIn({ email: user.email, password, address: freshAddress() })
        const second = yield* sessions.signIn({ email: user.email, password, address: freshAddress() })
        yield* sessions.signOut(first.token)
        expect(yield* sessions.resolve(first.token)).toEqual(Option.none())
        expect(Option.isSome(yield* sessions.resolve(second.token))).toBe(true)
        yield* sessions.signOut(first.token)
        yield* sessions.signOut("svc_ses_v1_" + "A".repeat(43))
        yield* sessions.signOut("")
        expect(Option.isSome(yield* sessions.resolve(second.token))).toBe(true)
      }))

    it.effect("a token that is not a session's resolves to nothing", () =>
      Effect.gen(function*() {
        const sessions = yield* Sessions
        const { user } = yield* accountFor()
        const signed = yield* sessions.signIn({ email: user.email, password, address: freshAddress() })
        const body = signed.token.slice("svc_ses_v1_".length)
        for (const token of ["", body, `svc_ses_v1_${body}x`, `svc_at_v1_${body}`, "svc_ses_v1_" + "A".repeat(43)]) {
          expect(yield* sessions.resolve(token), token).toEqual(Option.none())
        }
      }))

    it.effect("a deleted user's session does not resolve", () =>
      Effect.gen(function*() {
        const sessions = yield* Sessions
        const { user } = yield* accountFor()
        const signed = yield* sessions.signIn({ email: user.email, password, address: freshAddress() })
        yield* (yield* Users).delete(user.id)
        expect(yield* sessions.resolve(signed.token)).toEqual(Option.none())
        // Nor can anyone sign in as them.
        expect(yield* Effect.flip(sessions.signIn({ email: user.email, password, address: freshAddress() }))).toEqual(refused)
      }))
  })
})
