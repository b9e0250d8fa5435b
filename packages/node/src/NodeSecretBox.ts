/**
 * node:crypto behind the core's SecretBox port: AES-256-GCM with the installation's 32-byte key, and the host's
 * helpers to read that key from text or from a key file (created on first start).
 *
 * A sealed value is `v1.<iv>.<ciphertext>.<tag>`, each part base64url: a random 12-byte IV per seal and a 16-byte
 * authentication tag, so that a value sealed with another key, or changed in any part, does not open.
 */
import { SealBroken, SecretBox } from "@convene/core"
import { Effect, Either, Layer, Option, Redacted, Schema } from "effect"
import * as NodeCrypto from "node:crypto"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"

const cipher = "aes-256-gcm"
const keyLength = 32
const ivLength = 12
const tagLength = 16
const version = "v1"

const base64url = /^[A-Za-z0-9_-]*$/

/** base64url without padding, refused unless canonical (so that each value has one spelling). */
const decodePart = (part: string): Buffer | undefined => {
  if (!base64url.test(part)) return undefined
  const bytes = Buffer.from(part, "base64url")
  return bytes.toString("base64url") === part ? bytes : undefined
}

const malformed = new SealBroken({ message: "The sealed value is malformed" })
const unopenable = new SealBroken({ message: "The sealed value cannot be opened: it was sealed with another key, or changed" })

/** A SecretBox with this key (32 bytes, else a defect). */
export const make = (key: Redacted.Redacted<Uint8Array>): SecretBox["Type"] => {
  const secret = Buffer.from(Redacted.value(key))
  if (secret.length !== keyLength) {
    throw new Error(`The SecretBox key must be ${keyLength} bytes (AES-256), not ${secret.length}`)
  }
  return SecretBox.of({
    seal: (plaintext) =>
      Effect.sync(() => {
        const iv = NodeCrypto.randomBytes(ivLength)
        const encryption = NodeCrypto.createCipheriv(cipher, secret, iv, { authTagLength: tagLength })
        const ciphertext = Buffer.concat([encryption.update(plaintext, "utf8"), encryption.final()])
        const tag = encryption.getAuthTag()
        return [version, iv, ciphertext, tag].map((part) => (typeof part === "string" ? part : part.toString("base64url"))).join(".")
      }),
    open: (sealed) =>
      Effect.suspend(() => {
        const parts = sealed.split(".")
        if (parts.length !== 4 || parts[0] !== version) return Effect.fail(malformed)
        const [iv, ciphertext, tag] = parts.slice(1).map(decodePart)
        if (iv?.length !== ivLength || ciphertext === undefined || tag?.length !== tagLength) return Effect.fail(malformed)
        const decryption = NodeCrypto.createDecipheriv(cipher, secret, iv, { authTagLength: tagLength })
        decryption.setAuthTag(tag)
        try {
          return Effect.succeed(Buffer.concat([decryption.update(ciphertext), decryption.final()]).toString("utf8"))
        } catch {
          // final() throws when the tag does not authenticate: another key, or a changed IV, ciphertext or tag.
          return Effect.fail(unopenable)
        }
      })
  })
}

/** SecretBox on AES-256-GCM with this 32-byte key (see `parseKey` and `loadOrCreateKeyFile`). */
export const layer = (key: Redacted.Redacted<Uint8Array>): Layer.Layer<SecretBox> => Layer.sync(SecretBox, () => make(key))

const expected = "a 32-byte key: 64 hexadecimal characters, or 32 bytes in base64 or base64url (43 characters, or 44 ending in =)"

/**
 * The key from its text (surrounding whitespace ignored): 64 hexadecimal characters (`openssl rand -hex 32`), or
 * 32 bytes in base64 or base64url (`openssl rand -base64 32`). The error says what is expected and never repeats
 * the text, which may be a key.
 */
export const parseKey = (text: string): Either.Either<Uint8Array, string> => {
  const trimmed = text.trim()
  if (trimmed.length === 0) return Either.left(`Expected ${expected}; the text is empty`)
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Either.right(new Uint8Array(Buffer.from(trimmed, "hex")))
  if (/^[A-Za-z0-9+/]+={0,2}$/.test(trimmed) || /^[A-Za-z0-9_-]+={0,2}$/.test(trimmed)) {
    const bytes = Buffer.from(trimmed, "base64")
    if (bytes.length === keyLength) return Either.right(new Uint8Array(bytes))
    const hex = /^[0-9a-fA-F]+$/.test(trimmed) && trimmed.length % 2 === 0
    return Either.left(
      `Expected ${expected}; the text ${hex ? `is ${trimmed.length / 2} bytes in hexadecimal` : `decodes to ${bytes.length} bytes`}`
    )
  }
  return Either.left(`Expected ${expected}; the text is neither hexadecimal nor base64`)
}

/** The key file cannot be read, created or used (the message names the file and says why; never the key). */
export class KeyFileError extends Schema.TaggedError<KeyFileError>()("KeyFileError", {
  message: Schema.String
}) {}

const codeOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : undefined

const reason = (error: unknown) => codeOf(error) ?? (error instanceof Error ? error.message : String(error))

/** Runs a file system call; a failure is a KeyFileError that says what was being done, with the system's code. */
const attempt = <A>(doing: string, run: () => Promise<A>) =>
  Effect.tryPromise({ try: run, catch: (error) => new KeyFileError({ message: `Cannot ${doing}: ${reason(error)}` }) })

/** Files bigger than this are not key files (a key is at most 66 characters with its line end). */
const maxKeyFileSize = 1024

/** The key in the file, None when there is no file; refused when group or others may access it (on POSIX). */
const readKeyFile = (path: string) =>
  Effect.acquireUseRelease(
    attempt(`open the key file ${path}`, () =>
      Fs.open(path, "r").then(
        (handle) => Option.some(handle),
        (error) => (codeOf(error) === "ENOENT" ? Option.none<Fs.FileHandle>() : Promise.reject(error))
      )),
    Option.match({
      onNone: () => Effect.succeedNone,
      onSome: (handle) =>
        Effect.gen(function*() {
          const stat = yield* attempt(`read the key file ${path}`, () => handle.stat())
          if (!stat.isFile()) return yield* new KeyFileError({ message: `The key file ${path} is not a regular file` })
          if (process.platform !== "win32" && (stat.mode & 0o077) !== 0) {
            const mode = (stat.mode & 0o777).toString(8).padStart(4, "0")
            return yield* new KeyFileError({
              message: `Permissions ${mode} for the key file ${path} are too open: it must not be accessible by group or others (chmod 600 ${path})`
            })
          }
          if (stat.size > maxKeyFileSize) {
            return yield* new KeyFileError({ message: `The key file ${path} is malformed: expected ${expected}; the file is ${stat.size} bytes` })
          }
          const text = yield* attempt(`read the key file ${path}`, () => handle.readFile("utf8"))
          return Option.some(
            yield* Either.mapLeft(parseKey(text), (problem) => new KeyFileError({ message: `The key file ${path} is malformed: ${problem}` }))
          )
        })
    }),
    Option.match({ onNone: () => Effect.void, onSome: (handle) => Effect.promise(() => handle.close()).pipe(Effect.ignore) })
  )

/**
 * Writes a new key to `path` in one step: the key goes to a fresh private temporary file next to it (`wx`, 0600),
 * which is then hard-linked to `path`. A link never replaces a file, so when another process got there first this
 * answers false and that process's key stands; and no reader ever sees a key file half written.
 */
const createKeyFile = (path: string, key: Uint8Array) =>
  Effect.gen(function*() {
    const directory = Path.dirname(path)
    yield* attempt(`create the directory ${directory} of the key file`, () => Fs.mkdir(directory, { recursive: true, mode: 0o700 }))
    const temporary = `${path}.${process.pid}.${NodeCrypto.randomBytes(6).toString("hex")}.tmp`
    return yield* Effect.gen(function*() {
      yield* Effect.acquireUseRelease(
        attempt(`create the key file ${temporary}`, () => Fs.open(temporary, "wx", 0o600)),
        (handle) =>
          Effect.zipRight(
            attempt(`write the key file ${temporary}`, () => handle.writeFile(`${Buffer.from(key).toString("hex")}\n`)),
            attempt(`write the key file ${temporary}`, () => handle.sync())
          ),
        (handle) => Effect.promise(() => handle.close()).pipe(Effect.ignore)
      )
      const linked = yield* Effect.tryPromise({ try: () => Fs.link(temporary, path), catch: (error) => error }).pipe(
        Effect.as(true),
        Effect.catchAll((error) =>
          codeOf(error) === "EEXIST"
            ? Effect.succeed(false)
            : Effect.fail(new KeyFileError({ message: `Cannot create the key file ${path}: ${reason(error)}` }))
        )
      )
      // So that the new name survives a crash (best effort: not every platform can sync a directory).
      if (linked) yield* Effect.promise(() => Fs.open(directory, "r").then((dir) => dir.sync().finally(() => dir.close()))).pipe(Effect.ignore)
      return linked
    }).pipe(Effect.ensuring(Effect.promise(() => Fs.rm(temporary, { force: true })).pipe(Effect.ignore)))
  })

/**
 * The installation's key from the file at `path`, or a new random key written there (parent directories created,
 * the file readable by its owner only) when there is none; `created` says which. Two processes starting together
 * end up with the same key: the one that loses the race reads the winner's file. A file that group or others may
 * access is refused, as ssh refuses a private key, and so is a file that does not hold a key.
 */
export const loadOrCreateKeyFile = Effect.fn("NodeSecretBox.loadOrCreateKeyFile")(function*(path: string) {
  // Normally one or two rounds; a third only if the file that won the race was removed at once.
  for (let round = 0; round < 3; round++) {
    const existing = yield* readKeyFile(path)
    if (Option.isSome(existing)) return { key: existing.value, created: false }
    const key = new Uint8Array(NodeCrypto.randomBytes(keyLength))
    if (yield* createKeyFile(path, key)) return { key, created: true }
  }
  return yield* new KeyFileError({ message: `Cannot create the key file ${path}: it keeps appearing and disappearing` })
})
