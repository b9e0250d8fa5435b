/**
 * The Node adapters of the core's signing ports. JoseJwtSigner: RS256 key pairs whose JWTs a third party (jose's
 * own verifier, against a JWK set holding only the public key) accepts, with the claims and the header intact, a
 * kid that is the RFC 7638 thumbprint of the key, and no private member in the public JWK. NodeSecretBox:
 * AES-256-GCM sealing that round-trips any text, never seals the same way twice and refuses another key, any
 * changed part and anything malformed; the host's key parsing and its key file (created once, private, shared by
 * racing starts, refused when too open or malformed), whose messages never repeat a key.
 */
import { type Jwk, JwtSigner, SealBroken, SecretBox } from "@convene/core"
import { JoseJwtSigner, NodeSecretBox } from "@convene/node"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Either, FastCheck, Redacted } from "effect"
import { calculateJwkThumbprint, createLocalJWKSet, decodeProtectedHeader, type JWK, jwtVerify } from "jose"
import * as NodeCrypto from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll } from "vitest"

/** Verifies as a relying party would: jose, with a JWK set that holds only these public keys. */
const verify = (jwt: string, ...publicJwks: ReadonlyArray<Jwk>) =>
  Effect.promise(() =>
    jwtVerify(jwt, createLocalJWKSet({ keys: publicJwks.map((jwk) => ({ ...jwk }) as JWK) }), {
      algorithms: ["RS256"],
      issuer: "https://convene.example",
      audience: "client-1"
    }).then((result) => Either.right(result), (error: unknown) => Either.left(error))
  )

/** The code of jose's refusal, or "verified". */
const outcome = (result: Either.Either<unknown, unknown>) =>
  Either.isRight(result) ? "verified" : result.left instanceof Error && "code" in result.left ? result.left.code : result.left

const now = Math.floor(Date.now() / 1000)
const claims = {
  iss: "https://convene.example",
  sub: "user-1",
  aud: "client-1",
  iat: now,
  exp: now + 300,
  scope: "meetings:read meetings:write",
  nested: { list: [1, "two", null], flag: true },
  name: "Zoë 会議 🎉"
}

const privateMembers = ["d", "p", "q", "dp", "dq", "qi"]

describe("JoseJwtSigner", () => {
  layer(JoseJwtSigner.layer)((it) => {
    it.effect("signs a JWT that jose verifies with the public JWK: claims intact, header alg RS256, kid and typ JWT", () =>
      Effect.gen(function*() {
        const signer = yield* JwtSigner
        const { kid, privateJwk, publicJwk } = yield* signer.generate
        const jwt = yield* signer.sign(privateJwk, kid, claims)
        expect(jwt.split(".")).toHaveLength(3)
        const verified = Either.getOrThrow(yield* verify(jwt, publicJwk))
        expect(verified.payload).toEqual(claims)
        expect(verified.protectedHeader).toEqual({ alg: "RS256", kid, typ: "JWT" })
      }))

    it.effect("a JWT signed by another key does not verify, whether it names that key's kid or the expected one", () =>
      Effect.gen(function*() {
        const signer = yield* JwtSigner
        const expected = yield* signer.generate
        const other = yield* signer.generate
        const underItsOwnKid = yield* signer.sign(other.privateJwk, other.kid, claims)
        expect(outcome(yield* verify(underItsOwnKid, expected.publicJwk))).toBe("ERR_JWKS_NO_MATCHING_KEY")
        const underTheExpectedKid = yield* signer.sign(other.privateJwk, expected.kid, claims)
        expect(decodeProtectedHeader(underTheExpectedKid).kid).toBe(expected.kid)
        expect(outcome(yield* verify(underTheExpectedKid, expected.publicJwk))).toBe("ERR_JWS_SIGNATURE_VERIFICATION_FAILED")
        // The same kid paired with its own key again: the signer did not keep signing with the other key.
        const genuine = yield* signer.sign(expected.privateJwk, expected.kid, claims)
        expect(outcome(yield* verify(genuine, expected.publicJwk))).toBe("verified")
      }))

    it.effect("the kid is the RFC 7638 SHA-256 thumbprint of the key: stable for a key, different between keys", () =>
      Effect.gen(function*() {
        const signer = yield* JwtSigner
        const first = yield* signer.generate
        const second = yield* signer.generate
        expect(first.kid).toMatch(/^[A-Za-z0-9_-]{43}$/)
        expect(second.kid).not.toBe(first.kid)
        const thumbprint = (jwk: Jwk) => Effect.promise(() => calculateJwkThumbprint({ ...jwk } as JWK, "sha256"))
        expect(yield* thumbprint(first.publicJwk)).toBe(first.kid)
        expect(yield* thumbprint(first.privateJwk)).toBe(first.kid)
        const { kid: _kid, alg: _alg, use: _use, ...bare } = first.publicJwk
        expect(yield* thumbprint(bare)).toBe(first.kid)
        // Signing again (from the cache) names the same kid, and verifies.
        for (const round of [1, 2]) {
          const jwt = yield* signer.sign(first.privateJwk, first.kid, { ...claims, round })
          expect(decodeProtectedHeader(jwt).kid).toBe(first.kid)
          expect(Either.getOrThrow(yield* verify(jwt, first.publicJwk, second.publicJwk)).payload.round).toBe(round)
        }
      }))

    it.effect("the private JWK holds the private key (d), the public JWK none of it; both are RSA 2048 for RS256 signatures", () =>
      Effect.gen(function*() {
        const { kid, privateJwk, publicJwk } = yield* (yield* JwtSigner).generate
        expect(privateJwk).toHaveProperty("d")
        for (const member of privateMembers) {
          expect(privateJwk[member]).toEqual(expect.any(String))
          expect(publicJwk).not.toHaveProperty(member)
        }
        expect(publicJwk).toMatchObject({ kty: "RSA", kid, alg: "RS256", use: "sig", e: "AQAB" })
        expect(publicJwk.n).toBe(privateJwk.n)
        expect(Buffer.from(String(publicJwk.n), "base64url")).toHaveLength(256)
        // The public JWK is a key a JWK set publishes as it is.
        const key = NodeCrypto.createPublicKey({ key: { ...publicJwk }, format: "jwk" })
        expect(key.asymmetricKeyDetails?.modulusLength).toBe(2048)
      }))
  })
})

const randomKey = () => new Uint8Array(NodeCrypto.randomBytes(32))
const key = randomKey()

/** Flips one bit of one part of a sealed value (1 = IV, 2 = ciphertext, 3 = tag), keeping the format valid. */
const flip = (sealed: string, part: 1 | 2 | 3) => {
  const parts = sealed.split(".")
  const bytes = Buffer.from(parts[part]!, "base64url")
  bytes[bytes.length - 1]! ^= 0x01
  parts[part] = bytes.toString("base64url")
  return parts.join(".")
}

describe("NodeSecretBox", () => {
  layer(NodeSecretBox.layer(Redacted.make(key)))((it) => {
    it.effect("opens what it sealed: unicode, the empty string, 100 kB; the sealed form is v1.<iv>.<ciphertext>.<tag>", () =>
      Effect.gen(function*() {
        const box = yield* SecretBox
        const texts = ["Zoë's 会議 key 🎉\n\u0000\ttab", "", NodeCrypto.randomBytes(75_000).toString("base64")]
        expect(texts[2]).toHaveLength(100_000)
        for (const text of texts) {
          const sealed = yield* box.seal(text)
          expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]{22}$/)
          if (text.length > 0) expect(sealed).not.toContain(text)
          expect(yield* box.open(sealed)).toBe(text)
        }
      }))

    it.effect.prop("opens what it sealed, for any text", [FastCheck.string({ unit: "binary", maxLength: 200 })], ([text]) =>
      Effect.gen(function*() {
        const box = yield* SecretBox
        expect(yield* box.open(yield* box.seal(text))).toBe(text)
      }))

    it.effect("seals the same text differently each time (a fresh IV), and both open", () =>
      Effect.gen(function*() {
        const box = yield* SecretBox
        const first = yield* box.seal("the same secret")
        const second = yield* box.seal("the same secret")
        expect(second).not.toBe(first)
        expect(second.split(".")[1]).not.toBe(first.split(".")[1])
        expect(yield* box.open(first)).toBe("the same secret")
        expect(yield* box.open(second)).toBe("the same secret")
      }))

    it.effect("refuses a value sealed with another key, without naming the key or the text", () =>
      Effect.gen(function*() {
        const sealed = yield* NodeSecretBox.make(Redacted.make(randomKey())).seal("sealed elsewhere")
        const error = yield* Effect.flip((yield* SecretBox).open(sealed))
        expect(error).toBeInstanceOf(SealBroken)
        expect(error.message).toMatch(/cannot be opened/)
        expect(error.message).not.toContain("sealed elsewhere")
        expect(error.message).not.toContain(Buffer.from(key).toString("hex"))
        expect(error.message).not.toContain(Buffer.from(key).toString("base64url"))
      }))

    it.effect("refuses a value with a changed IV, ciphertext or tag", () =>
      Effect.gen(function*() {
        const box = yield* SecretBox
        const sealed = yield* box.seal("a private signing key")
        for (const part of [1, 2, 3] as const) {
          const changed = flip(sealed, part)
          expect(changed).not.toBe(sealed)
          const error = yield* Effect.flip(box.open(changed))
          expect(error).toMatchObject({ _tag: "SealBroken", message: expect.stringMatching(/cannot be opened/) })
        }
        expect(yield* box.open(sealed)).toBe("a private signing key")
      }))

    it.effect("refuses malformed values: garbage, another version, missing or extra parts, a short IV or tag, padding", () =>
      Effect.gen(function*() {
        const box = yield* SecretBox
        const sealed = yield* box.seal("secret")
        const [, iv, ciphertext, tag] = sealed.split(".") as [string, string, string, string]
        const malformed = [
          "",
          "garbage",
          "v1...",
          "v1.a.b.c",
          `v2.${iv}.${ciphertext}.${tag}`,
          `${iv}.${ciphertext}.${tag}`,
          `${sealed}.${tag}`,
          `v1.${iv}.${ciphertext}`,
          `v1.${iv.slice(0, 8)}.${ciphertext}.${tag}`,
          `v1.${iv}.${ciphertext}.${Buffer.from(tag, "base64url").subarray(0, 12).toString("base64url")}`,
          `v1.${iv}.${ciphertext}.${Buffer.from(tag, "base64url").toString("base64")}`,
          `v1.${iv}.${ciphertext}!.${tag}`
        ]
        for (const value of malformed) {
          const error = yield* Effect.flip(box.open(value))
          expect(error).toBeInstanceOf(SealBroken)
          expect(error.message).not.toContain("secret")
        }
      }))
  })

  it("refuses a key that is not 32 bytes", () => {
    expect(() => NodeSecretBox.make(Redacted.make(new Uint8Array(16)))).toThrow(/32 bytes/)
  })
})

describe("NodeSecretBox.parseKey", () => {
  const bytesOf = (text: string) => Either.getOrThrow(NodeSecretBox.parseKey(text))

  it("reads 32 bytes from 64 hexadecimal characters, base64 (padded or not) or base64url, around whitespace", () => {
    const bytes = new Uint8Array(NodeCrypto.randomBytes(32))
    // Bytes whose base64 needs both of its special characters, so that base64 and base64url differ.
    bytes.set([0xfb, 0xff, 0xbf], 0)
    const buffer = Buffer.from(bytes)
    const spellings = [
      buffer.toString("hex"),
      buffer.toString("hex").toUpperCase(),
      buffer.toString("base64"),
      buffer.toString("base64").replace(/=$/, ""),
      buffer.toString("base64url"),
      `${buffer.toString("base64url")}=`,
      `  ${buffer.toString("hex")}\n`
    ]
    expect(buffer.toString("base64")).toMatch(/[+/]/)
    expect(buffer.toString("base64url")).toMatch(/[-_]/)
    for (const text of spellings) expect(bytesOf(text)).toEqual(bytes)
  })

  it("refuses 31 or 33 bytes in any spelling, and text that is no key, without repeating the text", () => {
    const texts = [31, 33].flatMap((size) => {
      const buffer = NodeCrypto.randomBytes(size)
      return [buffer.toString("hex"), buffer.toString("base64"), buffer.toString("base64url")]
    })
    texts.push("correct horse battery staple", "", "   \n", "my-secret-passphrase-that-is-not-a-key-0123456789", "zz".repeat(32))
    for (const text of texts) {
      const problem = Either.getLeft(NodeSecretBox.parseKey(text))
      expect(problem._tag, text).toBe("Some")
      const message = problem._tag === "Some" ? problem.value : ""
      expect(message).toMatch(/32-byte key/)
      if (text.trim().length > 0) expect(message).not.toContain(text.trim())
    }
    expect(Either.getLeft(NodeSecretBox.parseKey(NodeCrypto.randomBytes(31).toString("hex")))).toEqual(
      expect.objectContaining({ value: expect.stringMatching(/31 bytes in hexadecimal/) })
    )
  })
})

describe("NodeSecretBox.loadOrCreateKeyFile", () => {
  const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "convene-key-file-"))
  afterAll(() => Fs.rmSync(root, { recursive: true, force: true }))
  let count = 0
  const freshPath = () => Path.join(root, `case-${++count}`, "nested", "secret.key")

  it.effect("creates a private (0600) key file once, in new directories, and reads the same key afterwards", () =>
    Effect.gen(function*() {
      const path = freshPath()
      const first = yield* NodeSecretBox.loadOrCreateKeyFile(path)
      expect(first.created).toBe(true)
      expect(first.key).toHaveLength(32)
      expect(Fs.statSync(path).mode & 0o777).toBe(0o600)
      expect(Either.getOrThrow(NodeSecretBox.parseKey(Fs.readFileSync(path, "utf8")))).toEqual(first.key)
      const second = yield* NodeSecretBox.loadOrCreateKeyFile(path)
      expect(second).toEqual({ key: first.key, created: false })
      expect(Fs.readdirSync(Path.dirname(path))).toEqual(["secret.key"])
      // And the key works in the SecretBox.
      const box = NodeSecretBox.make(Redacted.make(second.key))
      expect(yield* box.open(yield* NodeSecretBox.make(Redacted.make(first.key)).seal("kept"))).toBe("kept")
    }))

  it.effect("reads a key file the operator wrote (hex or base64)", () =>
    Effect.gen(function*() {
      const path = freshPath()
      const bytes = NodeCrypto.randomBytes(32)
      Fs.mkdirSync(Path.dirname(path), { recursive: true })
      Fs.writeFileSync(path, `${bytes.toString("base64")}\n`, { mode: 0o600 })
      expect(yield* NodeSecretBox.loadOrCreateKeyFile(path)).toEqual({ key: new Uint8Array(bytes), created: false })
    }))

  it.effect("refuses a key file that group or others can read, like ssh, without showing the key", () =>
    Effect.gen(function*() {
      const path = freshPath()
      const { key: created } = yield* NodeSecretBox.loadOrCreateKeyFile(path)
      Fs.chmodSync(path, 0o644)
      const error = yield* Effect.flip(NodeSecretBox.loadOrCreateKeyFile(path))
      expect(error).toBeInstanceOf(NodeSecretBox.KeyFileError)
      expect(error.message).toContain(path)
      expect(error.message).toMatch(/0644.*too open.*chmod 600/)
      expect(error.message).not.toContain(Buffer.from(created).toString("hex"))
      Fs.chmodSync(path, 0o640)
      expect((yield* Effect.flip(NodeSecretBox.loadOrCreateKeyFile(path))).message).toMatch(/0640.*too open/)
      // The file is left as it was: the key is not replaced.
      Fs.chmodSync(path, 0o600)
      expect(yield* NodeSecretBox.loadOrCreateKeyFile(path)).toEqual({ key: created, created: false })
    }))

  it.effect("refuses a malformed key file, naming the file and what is expected, not its content", () =>
    Effect.gen(function*() {
      const path = freshPath()
      Fs.mkdirSync(Path.dirname(path), { recursive: true })
      for (const content of ["hunter2-not-a-key\n", "", NodeCrypto.randomBytes(31).toString("hex"), "a".repeat(5000)]) {
        Fs.writeFileSync(path, content, { mode: 0o600 })
        const error = yield* Effect.flip(NodeSecretBox.loadOrCreateKeyFile(path))
        expect(error).toMatchObject({ _tag: "KeyFileError", message: expect.stringContaining(`The key file ${path} is malformed`) })
        expect(error.message).toMatch(/32-byte key/)
        if (content.trim().length > 0) expect(error.message).not.toContain(content.trim())
        // Not replaced by a new key either.
        expect(Fs.readFileSync(path, "utf8")).toBe(content)
      }
    }))

  it.effect("concurrent first starts on a new path agree on one key, created by exactly one of them", () =>
    Effect.gen(function*() {
      for (let round = 0; round < 5; round++) {
        const path = freshPath()
        const results = yield* Effect.all(Array.from({ length: 8 }, () => NodeSecretBox.loadOrCreateKeyFile(path)), {
          concurrency: "unbounded"
        })
        expect(results.filter((result) => result.created)).toHaveLength(1)
        for (const result of results) expect(result.key).toEqual(results[0]!.key)
        expect(Either.getOrThrow(NodeSecretBox.parseKey(Fs.readFileSync(path, "utf8")))).toEqual(results[0]!.key)
        // No temporary file is left behind.
        expect(Fs.readdirSync(Path.dirname(path))).toEqual(["secret.key"])
      }
    }))
})
