/**
 * NodeSecretVault, the SecretVault port on AES-256-GCM under CONVENE_SECRETS_KEY: any text round-trips, no two seals
 * are alike, each ciphertext names its key so that old ciphertexts still open after a new key is put first
 * (rotation), a changed part or header or a key no longer configured fails, and without a key the vault is
 * unavailable with a message naming the variable. The parser's errors never repeat the text they refuse.
 */
import { SecretUnreadable, SecretVaultUnavailable } from "@convene/core"
import { NodeSecretVault } from "@convene/node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Exit, FastCheck } from "effect"
import * as NodeCrypto from "node:crypto"

const newKey = () => NodeCrypto.randomBytes(32).toString("base64")

const vaultOf = (text: string) => NodeSecretVault.make(Either.getOrThrow(NodeSecretVault.parseKeys(text)))

const failureOf = <A, E>(effect: Effect.Effect<A, E>) =>
  Effect.map(Effect.exit(effect), (exit) => (Exit.isFailure(exit) ? exit.cause : undefined))

describe("NodeSecretVault", () => {
  it.effect.prop("seals any text that opens to the same text, never the same way twice", [FastCheck.string({ unit: "grapheme" })], ([text]) =>
    Effect.gen(function*() {
      const vault = vaultOf(newKey())
      const first = yield* vault.seal(text)
      const second = yield* vault.seal(text)
      expect(first).not.toEqual(second)
      expect(yield* vault.open(first)).toBe(text)
      expect(yield* vault.open(second)).toBe(text)
      if (text.length >= 8) expect(first).not.toContain(Buffer.from(text).toString("base64url"))
    }), { fastCheck: { numRuns: 50 } })

  it.effect("a sealed value is v1.<kid>.<iv>.<ciphertext>.<tag>, the kid derived from an unnamed key or the one given", () =>
    Effect.gen(function*() {
      const sealed = yield* vaultOf(`main:${newKey()}`).seal("s3cret")
      expect(sealed).toMatch(/^v1\.main\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/)
      const key = newKey()
      const derived = NodeCrypto.createHash("sha256").update(Buffer.from(key, "base64")).digest("base64url").slice(0, 8)
      expect((yield* vaultOf(key).seal("s3cret")).split(".")[1]).toBe(derived)
    }))

  it.effect("rotation: the first key seals, every listed key opens what it sealed, and isStale tells which to seal again", () =>
    Effect.gen(function*() {
      const oldKey = newKey()
      const before = vaultOf(`old:${oldKey}`)
      const sealedBefore = yield* before.seal("idp-secret-1")
      const after = vaultOf(`new:${newKey()},old:${oldKey}`)
      expect(yield* after.open(sealedBefore)).toBe("idp-secret-1")
      const sealedAfter = yield* after.seal("idp-secret-2")
      expect(sealedAfter.split(".")[1]).toBe("new")
      expect(after.isStale(sealedBefore)).toBe(true)
      expect(after.isStale(sealedAfter)).toBe(false)
      // The old vault does not know the new key.
      const unknown = yield* failureOf(before.open(sealedAfter))
      expect(JSON.stringify(unknown)).toContain("no longer holds the key")
      expect(yield* Effect.flip(before.open(sealedAfter))).toBeInstanceOf(SecretUnreadable)
    }))

  it.effect("a changed IV, ciphertext, tag or key id, another key under the same id, or a malformed value does not open", () =>
    Effect.gen(function*() {
      const vault = vaultOf(`k1:${newKey()},k2:${newKey()}`)
      const sealed = yield* vault.seal("a secret worth keeping")
      const parts = sealed.split(".")
      const flip = (part: string) => {
        const bytes = Buffer.from(part, "base64url")
        bytes[0] = bytes[0]! ^ 1
        return bytes.toString("base64url")
      }
      const variants = [
        [parts[0], parts[1], flip(parts[2]!), parts[3], parts[4]],
        [parts[0], parts[1], parts[2], flip(parts[3]!), parts[4]],
        [parts[0], parts[1], parts[2], parts[3], flip(parts[4]!)],
        [parts[0], "k2", parts[2], parts[3], parts[4]],
        ["v2", ...parts.slice(1)],
        parts.slice(0, 4),
        [...parts, "x"],
        [parts[0], parts[1], "!!", parts[3], parts[4]]
      ].map((variant) => variant.join("."))
      for (const variant of variants) expect(yield* Effect.flip(vault.open(variant))).toBeInstanceOf(SecretUnreadable)
      expect(yield* Effect.flip(vault.open(""))).toBeInstanceOf(SecretUnreadable)
      const sameIdOtherKey = vaultOf(`k1:${newKey()}`)
      expect(yield* Effect.flip(sameIdOtherKey.open(sealed))).toBeInstanceOf(SecretUnreadable)
      expect(yield* vault.open(sealed)).toBe("a secret worth keeping")
    }))

  it.effect("without a key the vault is unavailable: seal and open fail naming CONVENE_SECRETS_KEY", () =>
    Effect.gen(function*() {
      const vault = NodeSecretVault.make([])
      expect(vault.available).toBe(false)
      const sealing = yield* Effect.flip(vault.seal("x"))
      expect(sealing).toBeInstanceOf(SecretVaultUnavailable)
      expect(sealing.message).toContain("CONVENE_SECRETS_KEY")
      expect(yield* Effect.flip(vault.open("v1.k.a.b.c"))).toBeInstanceOf(SecretVaultUnavailable)
      expect(vaultOf(newKey()).available).toBe(true)
    }))

  it("parseKeys takes base64 or base64url keys, named or not, and refuses anything else naming the variable, never the text", () => {
    const key = NodeCrypto.randomBytes(32)
    expect(Either.isRight(NodeSecretVault.parseKeys(key.toString("base64")))).toBe(true)
    expect(Either.isRight(NodeSecretVault.parseKeys(` ${key.toString("base64url")} `))).toBe(true)
    const rotated = Either.getOrThrow(NodeSecretVault.parseKeys(`b:${newKey()}, a:${key.toString("base64")}`))
    expect(rotated.map((entry) => entry.kid)).toEqual(["b", "a"])
    const short = NodeCrypto.randomBytes(16).toString("base64")
    const refused = [
      "",
      " , ",
      short,
      `a:${key.toString("base64")},`,
      `bad id:${key.toString("base64")}`,
      `a:${key.toString("base64")},a:${newKey()}`,
      `${key.toString("hex")}`,
      "not base64 at all!"
    ]
    for (const text of refused) {
      const problem = NodeSecretVault.parseKeys(text)
      expect(Either.isLeft(problem), text).toBe(true)
      const message = Either.isLeft(problem) ? problem.left : ""
      expect(message).toContain("CONVENE_SECRETS_KEY")
      expect(message).not.toContain(key.toString("base64"))
      if (text.trim().length > 4) expect(message).not.toContain(text.trim().split(",")[0]!.split(":").pop()!)
    }
  })
})
