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
