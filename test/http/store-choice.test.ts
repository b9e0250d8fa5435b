/** How the server words its store (packages/http/src/Store.ts): where it is, and why it cannot start. */
import { Store } from "@convene/http"
import { Redacted } from "effect"
import { describe, expect, it } from "vitest"

const url = "postgres://convene:hunter2-secret@db.internal:5433/convene_prod"
const pgError = (code: string, message = "server said no") => ({ message: "PgClient: Failed to connect", cause: Object.assign(new Error(message), { code }) })

describe("describing the store", () => {
  it("names host, port and database, never the user or password", () => {
    expect(Store.describe({ _tag: "server", url: Redacted.make(url), poolSize: 10 })).toBe("PostgreSQL db.internal:5433/convene_prod")
    expect(Store.describeUrl("postgres:///convene?host=/var/run/postgresql")).toBe("/var/run/postgresql/convene")
    expect(Store.describeUrl("not a url")).not.toContain("not a url")
    expect(Store.describe({ _tag: "memory" })).toBe("memory (nothing persists)")
  })
})

describe("classifying a failure to connect", () => {
  it("gives up at once on a refused password, a refused user or a missing database, naming DATABASE_URL without the password", () => {
    for (const [code, words] of [["28P01", "refused the password of user \"convene\""], ["28000", "refused user \"convene\""], ["3D000", "does not exist"]]) {
      const failure = Store.classify(url, pgError(code!))
      expect(failure._tag).toBe("Fatal")
      if (failure._tag !== "Fatal") continue
      expect(failure.message).toContain(words)
      expect(failure.message).toContain("DATABASE_URL")
      expect(failure.message).toContain("db.internal:5433/convene_prod")
      expect(failure.message).not.toContain("hunter2-secret")
    }
  })

  it("retries what says the server is not there yet", () => {
    for (const code of ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ETIMEDOUT", "EHOSTUNREACH", "57P03", "53300"]) {
      expect(Store.classify(url, pgError(code))._tag, code).toBe("Transient")
    }
    // Node's connect to a name with several addresses fails with an AggregateError of their errors.
    const aggregate = { cause: Object.assign(new AggregateError([Object.assign(new Error("a"), { code: "ECONNREFUSED" })]), {}) }
    expect(Store.classify(url, aggregate)._tag).toBe("Transient")
    expect(Store.classify(url, { cause: new Error("Connection timed out") })._tag).toBe("Transient")
  })

  it("gives up on anything else, saying what the server said", () => {
    const failure = Store.classify(url, pgError("XX000", "certificate has expired"))
    expect(failure).toEqual({
      _tag: "Fatal",
      message: "PostgreSQL at db.internal:5433/convene_prod cannot be used: certificate has expired (check DATABASE_URL)"
    })
  })
})
