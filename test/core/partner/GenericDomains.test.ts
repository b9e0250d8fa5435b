/**
 * The generic e-mail domains core vendors (GenericDomainList.ts) are exactly the `free-email-domains` package's at
 * the version the lockfile installs: after an upgrade of the package this fails until
 * `node scripts/generic-domains.mjs` has written the new list.
 */
import { createRequire } from "node:module"
import { describe, expect, it } from "vitest"
import { genericDomainList, genericDomainsSource, isGenericDomain } from "@convene/core"

const require = createRequire(import.meta.url)

describe("the generic e-mail domains", () => {
  it("are the free-email-domains package's list, lower case and sorted", () => {
    const { version } = require("free-email-domains/package.json") as { readonly version: string }
    const packaged = [...new Set((require("free-email-domains") as ReadonlyArray<string>).map((d) => d.trim().toLowerCase()))]
      .filter((d) => d !== "")
      .sort()
    expect(genericDomainsSource).toBe(`free-email-domains ${version}`)
    expect(genericDomainList.split("\n")).toEqual(packaged)
  })

  it("include the large free mail providers and not a company's domain", () => {
    for (const domain of ["gmail.com", "outlook.com", "hotmail.com", "yahoo.com", "icloud.com", "aol.com"]) {
      expect(isGenericDomain(domain), domain).toBe(true)
    }
    expect(isGenericDomain("acme-corporation.example")).toBe(false)
    expect(isGenericDomain("GMAIL.COM")).toBe(false)
  })
})
