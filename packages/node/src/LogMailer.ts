/**
 * A Mailer that sends nothing: it logs each mail (recipient, subject and text) at the info level. The default when
 * no SMTP server is configured; the mails Convene writes carry no secrets, so logging them whole is safe.
 */
import { Mailer } from "@convene/core"
import { Effect, Layer } from "effect"

export const make: Mailer["Type"] = Mailer.of({
  send: (mail) =>
    Effect.logInfo(`Mail to ${mail.to}: ${mail.subject}`, mail.text).pipe(
      Effect.annotateLogs({ "mail.to": mail.to, "mail.subject": mail.subject }),
      Effect.withSpan("Mailer.send")
    )
})

/** Mailer that logs each mail instead of sending it. */
export const layer: Layer.Layer<Mailer> = Layer.succeed(Mailer, make)
