/**
 * nodemailer behind the core's Mailer port: plain-text mail over SMTP to the server named by a URL such as
 * `smtp://user:pass@mail.example:587` (STARTTLS when the server offers it) or `smtps://user:pass@mail.example:465`
 * (TLS from the start). nodemailer's own URL query options pass through (`?tls.rejectUnauthorized=false`,
 * `?requireTLS=true`, ...). One transport per layer, closed when the layer's scope ends.
 *
 * A failure is a MailFailed whose message names the server and what went wrong, and never contains the password
 * (nor the URL, which holds it).
 */
import { type Mail, MailFailed, Mailer } from "@convene/core"
import { type Config, ConfigError, Effect, Either, Layer, Redacted } from "effect"
import * as Nodemailer from "nodemailer"

export interface Options {
  /** The sender of every mail (RFC 5322 address, with a display name if wanted). Default `Convene <convene@localhost>`. */
  readonly from?: string
}

export const defaultFrom = "Convene <convene@localhost>"

/** The server part of the SMTP URL (safe to show) and its password (to keep out of messages), or why it is not one. */
export const parseUrl = (url: string): Either.Either<{ readonly server: string; readonly password: string }, string> => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return Either.left("The SMTP URL is not a valid URL (expected smtp://user:password@host:port or smtps://...)")
  }
  if (parsed.protocol !== "smtp:" && parsed.protocol !== "smtps:") {
    return Either.left(`The SMTP URL must start with smtp:// or smtps:// (not ${parsed.protocol}//)`)
  }
  if (parsed.hostname === "") return Either.left("The SMTP URL has no host")
  return Either.right({
    server: `${parsed.protocol}//${parsed.host}`,
    password: decodeURIComponent(parsed.password)
  })
}

const codeOf = (error: unknown): string | undefined =>
  typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : undefined

/** The error's text with every spelling of the password taken out (as given, URL-encoded, base64 as in AUTH PLAIN). */
const scrub = (text: string, password: string): string => {
  if (password === "") return text
  const spellings = [password, encodeURIComponent(password), Buffer.from(password).toString("base64")]
  return spellings.reduce((scrubbed, spelling) => scrubbed.split(spelling).join("***"), text)
}

/** The Mailer on a nodemailer SMTP transport to this URL; the transport is closed when the scope ends. */
export const make = (url: Redacted.Redacted<string> | string, options: Options = {}) =>
  Effect.gen(function*() {
    const raw = Redacted.isRedacted(url) ? Redacted.value(url) : url
    const { password, server } = yield* Either.match(parseUrl(raw), {
      onLeft: (problem) => Effect.dieMessage(problem),
      onRight: Effect.succeed
    })
    const transport = yield* Effect.acquireRelease(
      Effect.sync(() =>
        Nodemailer.createTransport(
          {
            url: raw,
            // nodemailer waits up to 2 minutes for a connection and 10 minutes on an idle socket by default.
            connectionTimeout: 10_000,
            greetingTimeout: 10_000,
            socketTimeout: 30_000
          },
          { from: options.from ?? defaultFrom }
        )
      ),
      (transport) => Effect.sync(() => transport.close())
    )
    const send = Effect.fn("Mailer.send")(function*(mail: Mail) {
      yield* Effect.tryPromise({
        try: (signal) => transport.sendMail({ to: mail.to, subject: mail.subject, text: mail.text, signal }),
        catch: (error) => {
          const code = codeOf(error)
          const reason = error instanceof Error ? error.message : String(error)
          return new MailFailed({
            message: scrub(`Cannot send mail through ${server}${code === undefined ? "" : ` (${code})`}: ${reason}`, password)
          })
        }
      })
    })
    return Mailer.of({ send })
  })

/** Mailer over SMTP to this URL (`smtp://` or `smtps://`); an invalid URL is a defect (see `layerConfig`). */
export const layer = (url: Redacted.Redacted<string> | string, options: Options = {}): Layer.Layer<Mailer> =>
  Layer.scoped(Mailer, make(url, options))

/** Mailer over SMTP to the URL in this config (e.g. `Config.redacted("CONVENE_SMTP_URL")`), checked as config. */
export const layerConfig = (
  url: Config.Config<Redacted.Redacted<string>>,
  options: Options = {}
): Layer.Layer<Mailer, ConfigError.ConfigError> =>
  Layer.unwrapEffect(
    Effect.gen(function*() {
      const value = yield* url
      return yield* Either.match(parseUrl(Redacted.value(value)), {
        onLeft: (problem) => Effect.fail(ConfigError.InvalidData([], problem)),
        onRight: () => Effect.succeed(layer(value, options))
      })
    })
  )
