/**
 * Which redirect URIs a client may use (oauth/RedirectUris.ts): loopback with an explicit port, https, a
 * reverse-DNS private-use scheme; never a fragment, user information, http on another host or a scheme that
 * would run code. Matching is exact, but for the port of a loopback URI.
 */
import { RedirectUris } from "@convene/core"
import { describe, expect, it } from "@effect/vitest"
import { FastCheck } from "effect"
import { RedirectArbitraries as A } from "./fixtures.js"

const problemOf = (uri: string) => {
  const found = RedirectUris.classify(uri)
  return "problem" in found ? found.problem : undefined
}

describe("RedirectUris", () => {
  describe("classify", () => {
    it("names the kind of each allowed URI", () => {
      expect(RedirectUris.classify("http://127.0.0.1:8080/callback")).toEqual({ kind: "loopback" })
      expect(RedirectUris.classify("http://localhost:3000")).toEqual({ kind: "loopback" })
      expect(RedirectUris.classify("http://localhost:3000?x=1")).toEqual({ kind: "loopback" })
      expect(RedirectUris.classify("https://app.example/callback")).toEqual({ kind: "https" })
      expect(RedirectUris.classify("https://app.example:8443/cb?a=b")).toEqual({ kind: "https" })
      expect(RedirectUris.classify("com.example.app:/oauth2redirect")).toEqual({ kind: "private_use" })
      expect(RedirectUris.classify("com.example.app://callback")).toEqual({ kind: "private_use" })
    })

    it.prop("any loopback URI with a port is loopback", [A.loopbackUri], ([uri]) => {
      expect(RedirectUris.classify(uri)).toEqual({ kind: "loopback" })
      expect(RedirectUris.isLoopback(uri)).toBe(true)
    })

    it.prop("any https URL is https, and not loopback", [A.httpsUri], ([uri]) => {
      expect(RedirectUris.classify(uri)).toEqual({ kind: "https" })
      expect(RedirectUris.isLoopback(uri)).toBe(false)
    })

    it.prop("any reverse-DNS scheme is a private-use scheme", [A.privateUseUri], ([uri]) => {
      expect(RedirectUris.classify(uri)).toEqual({ kind: "private_use" })
    })

    it("refuses http on other hosts, loopback without a port, fragments, user information, code-running and dotless schemes", () => {
      const refused: ReadonlyArray<readonly [string, RegExp]> = [
        ["http://app.example/callback", /http on a host/],
        ["http://app.example:8080/callback", /http on a host/],
        ["http://127.0.0.2:8080/callback", /http on a host/],
        ["http://127.0.0.1/callback", /port/],
        ["http://localhost/callback", /port/],
        ["https://app.example/callback#top", /fragment/],
        ["https://app.example/callback#", /fragment/],
        ["http://127.0.0.1:8080/callback#x", /fragment/],
        ["com.example.app:/callback#x", /fragment/],
        ["https://user@app.example/callback", /user information/],
        ["https://user:secret@app.example/callback", /user information/],
        ["http://user@127.0.0.1:8080/callback", /user information/],
        ["http://localhost:8080@evil.example/callback", /user information/],
        ["javascript:alert(1)", /javascript/],
        ["JavaScript:alert(1)", /javascript/],
        ["data:text/html,<script>alert(1)</script>", /data/],
        ["file:///etc/passwd", /file/],
        ["myapp:/callback", /reverse domain name/],
        ["myapp://callback", /reverse domain name/],
        ["/callback", /absolute/],
        ["callback", /absolute/],
        ["", /absolute/],
        ["https://app.example/" + "a".repeat(2000), /2000/]
      ]
      for (const [uri, problem] of refused) expect(problemOf(uri), uri).toMatch(problem)
      for (const [uri] of refused) expect(RedirectUris.isLoopback(uri), uri).toBe(false)
    })

    it("refuses a URI with a control, space, DEL or non-ASCII character, which the URL parser would drop or encode", () => {
      // Each would reach the Location header as written: Node refuses such a header (a 500), or it splits the head.
      for (const uri of [
        "http://127.0.0.1:8000/cb\r\nSet-Cookie: pwn=1",
        "http://127.0.0.1:8000/cb\r\n",
        "http://127.0.0.1:8000/c\tb",
        "http://127.0.0.1:8000/cb\u0000",
        "http://127.0.0.1:8000/cb\u2028",
        "http://127.0.0.1:8000/cb\u007f",
        "http://127.0.0.1:8000/caf\u00e9",
        "http://127.0.0.1:8000/a b",
        "https://evil.example/cb\r\nSet-Cookie: x=1",
        "https://app.example/\u{1F600}",
        "https://b\u00fccher.example/cb",
        "com.example.app:/cb\n",
        " https://app.example/cb",
        "https://app.example/cb "
      ]) {
        expect(problemOf(uri), JSON.stringify(uri)).toMatch(/printable ASCII/)
        expect(RedirectUris.isLoopback(uri), JSON.stringify(uri)).toBe(false)
        expect(RedirectUris.matches(uri, [uri], true), JSON.stringify(uri)).toBe(false)
      }
      // Their percent-encoded forms are ordinary URIs.
      expect(RedirectUris.classify("http://127.0.0.1:8000/cb%0D%0ASet-Cookie:%20pwn=1")).toEqual({ kind: "loopback" })
      expect(RedirectUris.classify("https://app.example/caf%C3%A9")).toEqual({ kind: "https" })
    })

    it.prop(
      "a URI with any character outside printable ASCII is refused, wherever it stands",
      [
        FastCheck.oneof(A.loopbackUri, A.httpsUri, A.privateUseUri),
        FastCheck.oneof(
          FastCheck.integer({ min: 0, max: 0x20 }),
          FastCheck.integer({ min: 0x7f, max: 0xd7ff }),
          FastCheck.integer({ min: 0xe000, max: 0x10ffff })
        ),
        FastCheck.nat()
      ],
      ([uri, code, at]) => {
        const position = at % (uri.length + 1)
        const spoiled = uri.slice(0, position) + String.fromCodePoint(code) + uri.slice(position)
        expect("problem" in RedirectUris.classify(spoiled), JSON.stringify(spoiled)).toBe(true)
        expect(RedirectUris.matches(spoiled, [spoiled, uri], true), JSON.stringify(spoiled)).toBe(false)
      }
    )

    it.prop(
      "a fragment is refused on any URI",
      [FastCheck.oneof(A.loopbackUri, A.httpsUri, A.privateUseUri), FastCheck.string({ maxLength: 10 })],
      ([uri, fragment]) => {
        expect(problemOf(`${uri}#${fragment}`)).toMatch(/fragment/)
      }
    )
  })

  describe("matches", () => {
    it.prop(
      "a registered loopback URI matches the same URI on any port",
      [A.loopback, A.port],
      ([registered, port]) => {
        const uri = `http://${registered.host}:${registered.port}${registered.path}${registered.query}`
        const requested = `http://${registered.host}:${port}${registered.path}${registered.query}`
        expect(RedirectUris.matches(requested, [uri], false)).toBe(true)
      }
    )

    it.prop(
      "a loopback URI that differs from the registered one in anything but the port does not match",
      [A.loopback, A.loopback],
      ([registered, requested]) => {
        FastCheck.pre(
          registered.host !== requested.host || registered.path !== requested.path || registered.query !== requested.query
        )
        const uri = `http://${registered.host}:${registered.port}${registered.path}${registered.query}`
        expect(RedirectUris.matches(`http://${requested.host}:${requested.port}${requested.path}${requested.query}`, [uri], false)).toBe(false)
      }
    )

    it.prop(
      "https and private-use URIs match only character for character (the port of https too)",
      [FastCheck.oneof(A.httpsUri, A.privateUseUri), A.port],
      ([uri, port]) => {
        expect(RedirectUris.matches(uri, [uri], false)).toBe(true)
        for (const variant of [uri + "/", uri + "x", uri.toUpperCase(), uri.replace("https://", `https://www.`)]) {
          if (variant !== uri) expect(RedirectUris.matches(variant, [uri], false), variant).toBe(false)
        }
        if (uri.startsWith("https://")) {
          const url = new URL(uri)
          const withPort = `https://${url.hostname}:${port}${url.pathname}${url.search}`
          if (withPort !== uri) expect(RedirectUris.matches(withPort, [uri], false), withPort).toBe(false)
        }
      }
    )

    it("port variance is for loopback only: a registered https URI on another port, or an http URI for it, does not match", () => {
      expect(RedirectUris.matches("https://app.example:8443/cb", ["https://app.example:9443/cb"], false)).toBe(false)
      expect(RedirectUris.matches("https://app.example/cb", ["https://app.example:443/cb"], false)).toBe(false)
      expect(RedirectUris.matches("http://127.0.0.1:9000/cb", ["https://127.0.0.1:9000/cb"], false)).toBe(false)
      expect(RedirectUris.matches("http://localhost:9000/cb", ["http://127.0.0.1:9000/cb"], false)).toBe(false)
    })

    it.prop("with anyLoopback every loopback URI matches, and nothing else", [A.loopbackUri, A.httpsUri, A.privateUseUri], ([loopback, https, privateUse]) => {
      expect(RedirectUris.matches(loopback, [], true)).toBe(true)
      expect(RedirectUris.matches(https, [], true)).toBe(false)
      expect(RedirectUris.matches(privateUse, [], true)).toBe(false)
    })

    it("a requested URI that is not allowed never matches, even when registered", () => {
      for (const uri of ["http://app.example/cb", "https://app.example/cb#x", "myapp:/cb", "javascript:alert(1)"]) {
        expect(RedirectUris.matches(uri, [uri], false), uri).toBe(false)
        expect(RedirectUris.matches(uri, [uri], true), uri).toBe(false)
      }
    })

    it("an empty registration matches nothing without anyLoopback", () => {
      expect(RedirectUris.matches("http://127.0.0.1:8080/cb", [], false)).toBe(false)
      expect(RedirectUris.matches("https://app.example/cb", [], false)).toBe(false)
    })
  })

  describe("formActionSource", () => {
    it("allows the loopback host on any port, the https origin, the private-use scheme", () => {
      expect(RedirectUris.formActionSource("http://127.0.0.1:8080/cb")).toBe("http://127.0.0.1:*")
      expect(RedirectUris.formActionSource("http://localhost:3000/cb?x=1")).toBe("http://localhost:*")
      expect(RedirectUris.formActionSource("https://app.example:8443/cb")).toBe("https://app.example:8443")
      expect(RedirectUris.formActionSource("com.example.app:/cb")).toBe("com.example.app:")
    })
  })
})
