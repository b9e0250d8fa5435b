/**
 * The WHATWG URL parser, global in every runtime Effect runs on (Node, browsers, Deno, Bun). Core compiles
 * without the DOM or Node type libraries, so the part of the class it reads is typed here.
 */
export interface ParsedUrl {
  readonly protocol: string
  readonly username: string
  readonly password: string
  readonly hostname: string
  readonly host: string
  readonly origin: string
  readonly pathname: string
  readonly search: string
  readonly hash: string
}

const WebUrl = (globalThis as unknown as { readonly URL: new(input: string) => ParsedUrl }).URL

/** The parsed absolute URL, or undefined when `input` is none. */
export const parseUrl = (input: string): ParsedUrl | undefined => {
  try {
    return new WebUrl(input)
  } catch {
    return undefined
  }
}

/**
 * Why `url` is not an absolute HTTPS URL without a user name or password (the URLs users give this server to call,
 * such as webhook endpoints, or to show), or undefined when it is one.
 */
export const httpsUrlProblem = (url: string): string | undefined => {
  const parsed = parseUrl(url)
  if (parsed === undefined) return "must be an absolute HTTPS URL"
  if (parsed.protocol !== "https:") return "must be an HTTPS URL (https://...)"
  if (parsed.username !== "" || parsed.password !== "") return "must not carry a user name or password"
  return undefined
}
