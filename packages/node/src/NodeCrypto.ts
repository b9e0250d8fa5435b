/** node:crypto behind the core's Crypto and PasswordHasher ports. */
import { Crypto, PasswordHasher } from "@convene/core"
import { Effect, Layer } from "effect"
import * as NodeCrypto from "node:crypto"

const sha256 = (input: string) => NodeCrypto.createHash("sha256").update(input, "utf8").digest("hex")

export const crypto = Crypto.of({
  randomBytes: (size) => Effect.sync(() => new Uint8Array(NodeCrypto.randomBytes(size))),
  randomUUID: Effect.sync(() => NodeCrypto.randomUUID()),
  sha256: (input) => Effect.sync(() => sha256(input)),
  hmacSha256: (key, data) => Effect.sync(() => NodeCrypto.createHmac("sha256", key).update(data).digest("hex")),
  timingSafeEqual: (a, b) => {
    const left = Buffer.from(a, "utf8")
    const right = Buffer.from(b, "utf8")
    // Hash both sides to equal length first, so that unequal lengths cost the same as unequal bytes.
    const equal = NodeCrypto.timingSafeEqual(
      NodeCrypto.createHash("sha256").update(left).digest(),
      NodeCrypto.createHash("sha256").update(right).digest()
    )
    return equal && left.length === right.length
  }
})

/**
 * scrypt with N = 2^15, r = 8, p = 1 (OWASP's minimum for scrypt), a 16-byte salt and a 32-byte key,
 * encoded as `scrypt$N$r$p$<salt b64>$<key b64>` so that parameters can be raised later.
 */
const N = 32768
const r = 8
const p = 1
const keyLength = 32
const maxmem = 128 * N * r * 2

const scrypt = (password: string, salt: Buffer, n: number, rr: number, pp: number, length: number) =>
  Effect.async<Buffer>((resume) => {
    NodeCrypto.scrypt(password, salt, length, { N: n, r: rr, p: pp, maxmem: 128 * n * rr * 2 }, (error, key) => {
      resume(error ? Effect.die(error) : Effect.succeed(key))
    })
  })

export const passwordHasher = PasswordHasher.of({
  hash: (password) =>
    Effect.gen(function*() {
      const salt = NodeCrypto.randomBytes(16)
      const key = yield* scrypt(password, salt, N, r, p, keyLength)
      return `scrypt$${N}$${r}$${p}$${salt.toString("base64")}$${key.toString("base64")}`
    }),
  verify: (password, encoded) =>
    Effect.gen(function*() {
      const parts = encoded.split("$")
      if (parts.length !== 6 || parts[0] !== "scrypt") return false
      const [n, rr, pp] = [Number(parts[1]), Number(parts[2]), Number(parts[3])]
      if (![n, rr, pp].every(Number.isSafeInteger) || 128 * n * rr * 2 > maxmem * 4) return false
      const expected = Buffer.from(parts[5]!, "base64")
      const key = yield* scrypt(password, Buffer.from(parts[4]!, "base64"), n, rr, pp, expected.length)
      return NodeCrypto.timingSafeEqual(key, expected)
    })
})

/** Crypto and PasswordHasher on node:crypto. */
export const layer: Layer.Layer<Crypto | PasswordHasher> = Layer.mergeAll(
  Layer.succeed(Crypto, crypto),
  Layer.succeed(PasswordHasher, passwordHasher)
)
