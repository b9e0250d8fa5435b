/**
 * Browser sessions: signing in with e-mail and password, the session a cookie names, signing out. Failed
 * attempts are counted in the store (so every server process shares the limit) per account and per client
 * address: after `accountLimit` failures for an account or `addressLimit` from an address within `window`,
 * sign-in is refused until the window has passed, whatever the password, so guessing is slow. The password is
 * checked in the same time whether the account exists or not.
 *
 * An attempt is counted before its password is checked, in the store call that checks the limit, and forgotten
 * only when it succeeds: were it counted after the check, attempts sent all at once would each find the count
 * under the limit, and each get its password checked.
 */
import { Context, DateTime, Duration, Effect, Encoding, Layer, Option, Schema } from "effect"
import { Crypto, PasswordHasher } from "../ports/Crypto.js"
import { Email } from "../shared/Text.js"
import { now } from "../shared/Time.js"
import type { User } from "../identity/Identity.js"
import { UserStore } from "../identity/IdentityStore.js"
import { Session, SessionId } from "./OAuth.js"
import { SessionStore } from "./OAuthStore.js"
import { fn } from "../shared/Span.js"

/** The session token's prefix (the cookie's value; also accepted as a bearer token by the revocation endpoint). */
export const sessionPrefix = "svc_ses_v1_"

export const sessionPolicy = {
  /** A session ends this long after sign-in, active or not. */
  lifetime: Duration.hours(12),
  window: Duration.minutes(15),
  accountLimit: 5,
  addressLimit: 20
} as const

/** Wrong e-mail or password (one message for both: which of them was wrong is not told). */
export class SignInRefused extends Schema.TaggedError<SignInRefused>()("SignInRefused", {
  message: Schema.String
}) {}

/** Too many failed attempts for the account or from the address. */
export class SignInThrottled extends Schema.TaggedError<SignInThrottled>()("SignInThrottled", {
  retry_after_seconds: Schema.Number,
  message: Schema.String
}) {}

/** A session that is live: not ended, not expired, its user still there. */
export interface LiveSession {
  readonly session: Session
  readonly user: User
}

/**
 * A scrypt hash of a password nobody has, checked when the account does not exist so that the answer takes as
 * long as for a wrong password (made once per process, on first use).
 */
const decoyPassword = "convene decoy password, never a user's"

const make = Effect.gen(function*() {
  const sessions = yield* SessionStore
  const users = yield* UserStore
  const crypto = yield* Crypto
  const hasher = yield* PasswordHasher
  const decoy = yield* Effect.cached(hasher.hash(decoyPassword))

  const refused = new SignInRefused({ message: "wrong e-mail address or password" })

  const throttled = new SignInThrottled({
    retry_after_seconds: Duration.toSeconds(sessionPolicy.window),
    message: `too many failed sign-in attempts; try again in ${Math.ceil(Duration.toMinutes(sessionPolicy.window))} minutes`
  })

  /** Signs in: a new session and its token (the cookie's value, shown only here). */
  const signIn = fn("Sessions.signIn")(function*(input: {
    readonly email: string
    readonly password: string
    readonly address: string
  }) {
    const email = Schema.decodeUnknownOption(Email)(input.email)
    const account = `account:${Option.getOrElse(email, () => input.email.trim().toLowerCase())}`
    const attempt = yield* crypto.randomUUID
    const startedAt = yield* now
    const admitted = yield* sessions.recordAttempt({
      id: attempt,
      limits: [{ key: account, limit: sessionPolicy.accountLimit }, { key: `address:${input.address}`, limit: sessionPolicy.addressLimit }],
      at: startedAt,
      since: DateTime.subtractDuration(startedAt, sessionPolicy.window)
    })
    if (!admitted) return yield* Effect.fail(throttled)
    const user = Option.isSome(email) ? yield* users.findByEmail(email.value) : Option.none()
    const hash = Option.isSome(user) && user.value.password_hash !== null ? user.value.password_hash : yield* decoy
    const verified = yield* hasher.verify(input.password.slice(0, 1024), hash)
    // A failed attempt stays counted: it is one of the failures the limit is about.
    if (Option.isNone(user) || user.value.password_hash === null || !verified) return yield* Effect.fail(refused)
    yield* sessions.forgetAttempt(attempt)
    yield* sessions.clearFailures(account)
    const at = yield* now
    const token = sessionPrefix + Encoding.encodeBase64Url(yield* crypto.randomBytes(32))
    const session = new Session({
      id: SessionId.make(yield* crypto.randomUUID),
      token_hash: yield* crypto.sha256(token),
      user_id: user.value.id,
      workspace_id: user.value.workspace_id,
      created_at: at,
      expires_at: DateTime.addDuration(at, sessionPolicy.lifetime),
      revoked_at: null
    })
    yield* sessions.insert(session).pipe(Effect.orDie)
    return { token, session, user: user.value } as const
  })

  /** The live session a token names, if any. */
  const resolve = fn("Sessions.resolve")(function*(token: string) {
    if (!token.startsWith(sessionPrefix) || !/^[A-Za-z0-9_-]{43}$/.test(token.slice(sessionPrefix.length))) {
      return Option.none<LiveSession>()
    }
    const hash = yield* crypto.sha256(token)
    const found = yield* sessions.findByHash(hash)
    if (Option.isNone(found) || !crypto.timingSafeEqual(found.value.session.token_hash, hash)) return Option.none<LiveSession>()
    const { session, user } = found.value
    const at = yield* now
    if (session.revoked_at !== null || DateTime.lessThanOrEqualTo(session.expires_at, at) || Option.isNone(user)) {
      return Option.none<LiveSession>()
    }
    if (user.value.workspace_id !== session.workspace_id) return Option.none<LiveSession>()
    return Option.some<LiveSession>({ session, user: user.value })
  })

  /** Ends the session the token names (nothing when it names none). */
  const signOut = fn("Sessions.signOut")(function*(token: string) {
    const live = yield* resolve(token)
    if (Option.isSome(live)) yield* sessions.revoke(live.value.session.id, yield* now)
  })

  /** Deletes ended sessions and old failures. */
  const purge = fn("Sessions.purge")(function*() {
    const at = yield* now
    yield* sessions.purge(at)
    yield* sessions.purgeFailures(DateTime.subtractDuration(at, sessionPolicy.window))
  })

  return { signIn, resolve, signOut, purge } as const
})

export class Sessions extends Context.Tag("@convene/core/Sessions")<Sessions, Effect.Effect.Success<typeof make>>() {
  static readonly layer: Layer.Layer<Sessions, never, SessionStore | UserStore | Crypto | PasswordHasher> = Layer.effect(
    Sessions,
    make
  )
}
