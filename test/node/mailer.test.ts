/**
 * The Mailer adapters. SmtpMailer against a real SMTP server started here (smtp-server, checking the user and
 * password, and echoing a wrong one in its refusal): the mail arrives with its recipient, subject, text and sender (parsed back with mailparser); a wrong
 * password, an unreachable server and a malformed URL fail with messages that never contain the password.
 * LogMailer logs the recipient, subject and text, and sends nothing.
 */
import { MailFailed, Mailer } from "@convene/core"
import { LogMailer, SmtpMailer } from "@convene/node"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Config, ConfigProvider, Effect, Exit, HashMap, Layer, Logger, Redacted } from "effect"
import { simpleParser } from "mailparser"
import { afterAll, beforeAll } from "vitest"
import { freePort } from "../support/process.js"
import { type ReceivedMail, startSmtp, type TestSmtp } from "../support/smtp.js"

const USER = "convene"
/** With characters that must be escaped in a URL, so that every spelling of it can be looked for. */
const PASSWORD = "s3cr3t p@ss/wörd"
const smtpUrl = (port: number, password = PASSWORD) => `smtp://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}`

let smtp: TestSmtp
let port: number
let received: Array<ReceivedMail>

beforeAll(async () => {
  smtp = await startSmtp({
    onAuth: (auth, _session, callback) =>
      auth.username === USER && auth.password === PASSWORD
        ? callback(null, { user: auth.username })
        // Echoes what it was given, as a careless server might: the adapter must still keep it out of the message.
        : callback(new Error(`Invalid username or password (${auth.username}:${auth.password})`))
  })
  port = smtp.port
  received = smtp.mails
})

afterAll(async () => {
  await smtp?.close()
})

const mail = {
  to: "ada@example.com",
  subject: "Your webhook endpoint was disabled — Zoë",
  text: "Hello Ada,\n\nthe endpoint https://hooks.example/convene failed 20 times in a row.\nÜnïcödé and a long line: " +
    "x".repeat(200)
}

const send = (m: typeof mail) => Effect.flatMap(Mailer, (mailer) => mailer.send(m))

describe("SmtpMailer against a real SMTP server", () => {
  it.live("the mail arrives with its recipient, subject, text and the configured sender", () =>
    Effect.gen(function*() {
      const before = received.length
      yield* send(mail).pipe(Effect.provide(SmtpMailer.layer(smtpUrl(port), { from: "Convene <noreply@convene.test>" })))
      expect(received.length).toBe(before + 1)
      const message = received[before]!
      expect(message.envelopeFrom).toBe("noreply@convene.test")
      expect(message.envelopeTo).toEqual(["ada@example.com"])
      const parsed = yield* Effect.promise(() => simpleParser(message.raw))
      expect(parsed.subject).toBe(mail.subject)
      expect(parsed.text?.replace(/\n$/, "")).toBe(mail.text)
      expect(parsed.from?.value).toEqual([{ name: "Convene", address: "noreply@convene.test" }])
      expect(Array.isArray(parsed.to) ? parsed.to.map((to) => to.text) : parsed.to?.text).toBe("ada@example.com")
      expect(parsed.html).toBe(false)
    }))

  it.live("the sender defaults to Convene <convene@localhost>; a Redacted URL works the same", () =>
    Effect.gen(function*() {
      const before = received.length
      yield* send(mail).pipe(Effect.provide(SmtpMailer.layer(Redacted.make(smtpUrl(port)))))
      const parsed = yield* Effect.promise(() => simpleParser(received[before]!.raw))
      expect(parsed.from?.value).toEqual([{ name: "Convene", address: "convene@localhost" }])
      expect(SmtpMailer.defaultFrom).toBe("Convene <convene@localhost>")
    }))

  it.live("a wrong password is MailFailed naming the server, without the password in any spelling", () =>
    Effect.gen(function*() {
      const before = received.length
      const wrong = "wr0ng p@ss/wörd"
      const error = yield* Effect.flip(send(mail).pipe(Effect.provide(SmtpMailer.layer(smtpUrl(port, wrong)))))
      expect(error).toBeInstanceOf(MailFailed)
      expect(error.message).toContain(`smtp://127.0.0.1:${port}`)
      expect(error.message).toContain("EAUTH")
      expect(error.message).toContain("Invalid username or password")
      for (const spelling of [wrong, encodeURIComponent(wrong), Buffer.from(wrong).toString("base64"), "wr0ng"]) {
        expect(error.message).not.toContain(spelling)
      }
      expect(received.length).toBe(before)
    }))

  it.live("an unreachable server is MailFailed without the password", () =>
    Effect.gen(function*() {
      const closed = yield* Effect.promise(freePort)
      const error = yield* Effect.flip(send(mail).pipe(Effect.provide(SmtpMailer.layer(smtpUrl(closed)))))
      expect(error.message).toContain(`smtp://127.0.0.1:${closed}`)
      expect(error.message).toContain("ECONNREFUSED")
      expect(error.message).not.toContain("s3cr3t")
    }))

  it.effect("a URL that is not smtp:// or smtps:// is a config error (layerConfig) or a defect (layer), without the password", () =>
    Effect.gen(function*() {
      const url = `https://${USER}:${encodeURIComponent(PASSWORD)}@mail.example/`
      const fromConfig = yield* send(mail).pipe(
        Effect.provide(SmtpMailer.layerConfig(Config.redacted("CONVENE_SMTP_URL"))),
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["CONVENE_SMTP_URL", url]]))),
        Effect.exit
      )
      expect(Exit.isFailure(fromConfig)).toBe(true)
      const configMessage = Exit.isFailure(fromConfig) ? Cause.pretty(fromConfig.cause) : ""
      expect(configMessage).toContain("must start with smtp:// or smtps://")
      expect(configMessage).not.toContain("s3cr3t")

      const direct = yield* send(mail).pipe(Effect.provide(SmtpMailer.layer(url)), Effect.exit)
      expect(Exit.isFailure(direct) && Cause.isDie(direct.cause)).toBe(true)
      expect(Exit.isFailure(direct) ? Cause.pretty(direct.cause) : "").not.toContain("s3cr3t")
    }))
})

describe("LogMailer", () => {
  it.effect("logs the recipient, subject and text at info level", () =>
    Effect.gen(function*() {
      const lines: Array<{ level: string; message: unknown; annotations: Record<string, unknown> }> = []
      const capture = Logger.make(({ annotations, logLevel, message }) => {
        lines.push({ level: logLevel.label, message, annotations: Object.fromEntries(HashMap.toEntries(annotations)) })
      })
      const before = received.length
      yield* send(mail).pipe(Effect.provide(Layer.merge(LogMailer.layer, Logger.replace(Logger.defaultLogger, capture))))
      expect(lines).toHaveLength(1)
      const line = lines[0]!
      expect(line.level).toBe("INFO")
      expect(line.message).toEqual([`Mail to ${mail.to}: ${mail.subject}`, mail.text])
      expect(line.annotations).toEqual({ "mail.to": mail.to, "mail.subject": mail.subject })
      expect(received.length).toBe(before)
    }))
})
