/**
 * DomainVerificationStore in memory: every app's verification of every domain, by `JSON.stringify([app id, domain])`,
 * in the one state value. Units of work run one at a time on the store's one permit, so `lockDomain` is a plain read.
 */
import { type DomainVerification, DomainVerificationStore } from "@convene/core"
import { Effect, HashMap, Layer, Option } from "effect"
import { Memory } from "./Memory.js"

/** The key of an app's verification of a domain. */
export const domainVerificationKey = (appId: string, domain: string): string => JSON.stringify([appId, domain])

const byApp = (a: DomainVerification, b: DomainVerification) =>
  a.partner_app_id < b.partner_app_id ? -1 : a.partner_app_id > b.partner_app_id ? 1 : 0

const byKey = (a: DomainVerification, b: DomainVerification) => byApp(a, b) || (a.domain < b.domain ? -1 : a.domain > b.domain ? 1 : 0)

export const layer: Layer.Layer<DomainVerificationStore, never, Memory> = Layer.effect(
  DomainVerificationStore,
  Effect.gen(function*() {
    const memory = yield* Memory

    const ofDomain = (domain: string) =>
      Effect.map(memory.read, (state) =>
        HashMap.toValues(state.domainVerifications).filter((verification) => verification.domain === domain).sort(byApp))

    return DomainVerificationStore.of({
      get: Effect.fnUntraced(function*(appId, domain) {
        return HashMap.get((yield* memory.read).domainVerifications, domainVerificationKey(appId, domain))
      }),

      put: (verification) =>
        memory.modify((state) => [undefined, {
          ...state,
          domainVerifications: HashMap.set(
            state.domainVerifications,
            domainVerificationKey(verification.partner_app_id, verification.domain),
            verification
          )
        }]),

      verifiedOwner: (domain) =>
        Effect.map(ofDomain(domain), (verifications) =>
          Option.fromNullable(verifications.find((verification) => verification.status === "verified")?.partner_app_id)),

      lockDomain: ofDomain,

      due: Effect.fnUntraced(function*({ checkedBy, expiringBy, limit }) {
        const all = HashMap.toValues((yield* memory.read).domainVerifications)
        const expiring = all
          .filter((verification) => verification.status === "pending" && verification.expires_at.epochMillis <= expiringBy.epochMillis)
          .sort((a, b) => a.expires_at.epochMillis - b.expires_at.epochMillis || byKey(a, b))
        const checked = (verification: DomainVerification) => verification.last_checked_at?.epochMillis ?? -Infinity
        const stale = all
          .filter((verification) => verification.status === "verified" && checked(verification) <= checkedBy.epochMillis)
          .sort((a, b) => checked(a) - checked(b) || byKey(a, b))
        return [...expiring, ...stale].slice(0, limit)
      })
    })
  })
)
