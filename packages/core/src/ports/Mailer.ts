/**
 * Port: e-mail to users (a disabled webhook endpoint's creator is told so). Adapters: @convene/node (LogMailer,
 * which only logs the message, and SmtpMailer, which sends over SMTP with nodemailer).
 */
import { Context, type Effect, Schema } from "effect"

export class MailFailed extends Schema.TaggedError<MailFailed>()("MailFailed", {
  message: Schema.String
}) {}

export interface Mail {
  readonly to: string
  readonly subject: string
  /** Plain text. */
  readonly text: string
}

export class Mailer extends Context.Tag("@convene/core/Mailer")<Mailer, {
  readonly send: (mail: Mail) => Effect.Effect<void, MailFailed>
}>() {}
