/**
 * A real SMTP server for tests (smtp-server) on a free port of 127.0.0.1, keeping every mail it accepts with its
 * envelope and raw bytes. STARTTLS is off; with `auth`, logins are checked (insecure auth allowed: no TLS here).
 */
import type { AddressInfo } from "node:net"
import { SMTPServer, type SMTPServerOptions } from "smtp-server"

export interface ReceivedMail {
  readonly envelopeFrom: string
  readonly envelopeTo: ReadonlyArray<string>
  readonly raw: Buffer
}

export interface TestSmtp {
  readonly port: number
  readonly mails: Array<ReceivedMail>
  readonly close: () => Promise<void>
}

export const startSmtp = async (auth?: Pick<SMTPServerOptions, "onAuth">): Promise<TestSmtp> => {
  const mails: Array<ReceivedMail> = []
  const server = new SMTPServer({
    logger: false,
    ...(auth === undefined
      ? { disabledCommands: ["STARTTLS", "AUTH"] }
      : { disabledCommands: ["STARTTLS"], allowInsecureAuth: true, authMethods: ["PLAIN", "LOGIN"], ...auth }),
    onData: (stream, session, callback) => {
      const chunks: Array<Buffer> = []
      stream.on("data", (chunk: Buffer) => chunks.push(chunk))
      stream.on("end", () => {
        mails.push({
          envelopeFrom: session.envelope.mailFrom === false ? "" : session.envelope.mailFrom.address,
          envelopeTo: session.envelope.rcptTo.map((rcpt) => rcpt.address),
          raw: Buffer.concat(chunks)
        })
        callback()
      })
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    port: (server.server.address() as AddressInfo).port,
    mails,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
