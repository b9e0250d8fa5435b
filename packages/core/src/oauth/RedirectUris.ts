/**
 * Which redirect URIs a client may use (RFC 8252 for native apps, RFC 9700 for exact matching):
 * - loopback: `http://127.0.0.1:<port>/...` or `http://localhost:<port>/...`, with an explicit port; a
 *   registered loopback URI matches the same URI on any port (RFC 8252 7.3: the port is chosen at run time);
 * - https: an absolute https URL with a host;
 * - a private-use scheme of a native app: a reverse domain name such as `com.example.app:/callback` (RFC 8252
 *   7.1: the scheme must contain a period).
 * None may carry a fragment or user information. Apart from the loopback port, matching is exact, character
 * for character.
 *
 * A redirect URI is written as it is into a Location header, so it must be printable ASCII without spaces
 * (RFC 3986 characters, 0x21 to 0x7E). The URL parser would accept more: it drops tabs and line breaks and
 * percent-encodes the rest, so a URI with a CR LF inside would pass its checks and then break the response.
 */
import { parseUrl } from "../shared/Url.js"

export type RedirectKind = "loopback" | "https" | "private_use"

const loopbackHosts = new Set(["127.0.0.1", "localhost"])
/** Schemes that are never a native app's: they would run code or reach something other than the app. */
const refusedSchemes = new Set(["http", "https", "javascript", "data", "file", "blob", "about", "ftp", "ws", "wss", "vbscript"])
/** A character outside printable ASCII: a control character, a space, DEL or anything beyond ASCII. */
const unprintable = /[^\x21-\x7e]/

/** What kind of redirect URI `uri` is, or why it is none (for messages). */
export const classify = (uri: string): { readonly kind: RedirectKind } | { readonly problem: string } => {
  if (uri.length > 2000) return { problem: "is longer than 2000 characters" }
  const url = parseUrl(uri)
  if (url === undefined) return { problem: "is not an absolute URI" }
  if (url.hash !== "" || uri.includes("#")) return { problem: "must not have a fragment" }
  if (unprintable.test(uri)) {
    return { problem: "has a character that is not printable ASCII (spaces, control and non-ASCII characters must be percent-encoded)" }
  }
  if (url.username !== "" || url.password !== "") return { problem: "must not carry user information" }
  const scheme = url.protocol.slice(0, -1)
  if (scheme === "http") {
    if (!loopbackHosts.has(url.hostname)) return { problem: "uses http on a host that is not 127.0.0.1 or localhost" }
    if (!/^http:\/\/(127\.0\.0\.1|localhost):\d{1,5}(\/|$|\?)/i.test(uri)) {
      return { problem: "must name its port (http://127.0.0.1:<port>/...)" }
    }
    return { kind: "loopback" }
  }
  if (scheme === "https") return url.hostname === "" ? { problem: "has no host" } : { kind: "https" }
  if (refusedSchemes.has(scheme)) return { problem: `uses the scheme ${scheme}:, which is not allowed` }
  if (!scheme.includes(".")) {
    return { problem: "uses a private-use scheme that is not a reverse domain name (such as com.example.app:)" }
  }
  return { kind: "private_use" }
}

export const isLoopback = (uri: string): boolean => {
  const found = classify(uri)
  return "kind" in found && found.kind === "loopback"
}

/** A loopback URI without its port, to compare two loopback URIs on any port. */
const withoutPort = (uri: string) => uri.replace(/^(http:\/\/(?:127\.0\.0\.1|localhost)):\d{1,5}/i, "$1")

/**
 * Whether `requested` is allowed by the registered `uris`: equal to one of them, or a loopback URI equal to a
 * registered loopback URI but for the port. With no registered URI (`anyLoopback`), any loopback URI is.
 */
export const matches = (requested: string, uris: ReadonlyArray<string>, anyLoopback: boolean): boolean => {
  const found = classify(requested)
  if (!("kind" in found)) return false
  if (found.kind === "loopback") {
    if (anyLoopback) return true
    const bare = withoutPort(requested)
    return uris.some((uri) => uri === requested || (isLoopback(uri) && withoutPort(uri) === bare))
  }
  return uris.includes(requested)
}

/**
 * The Content-Security-Policy source that lets a form post be redirected to `uri` (Chromium applies
 * form-action to the redirect that follows a form submission): the origin with any port for loopback, the
 * origin for https, the scheme for a private-use scheme.
 */
export const formActionSource = (uri: string): string => {
  const url = parseUrl(uri)!
  const found = classify(uri)
  if ("kind" in found && found.kind === "loopback") return `http://${url.hostname}:*`
  if ("kind" in found && found.kind === "private_use") return url.protocol
  return url.origin
}
