/**
 * Public consumer identity providers, which an IdP configuration may not use (400 `invalid_idp`): anyone can make an
 * account there, so signing in through them proves nothing about an organisation. Kept as data: each provider's
 * issuers and discovery locations, as URL prefixes (an origin, or an origin and leading path segments). A URL matches
 * a prefix when it is that prefix or continues it with `/`; hosts compare in lower case. Both the discovery URL a
 * partner gives and the issuer its document names are checked.
 *
 * Google's issuer serves consumer and Workspace accounts alike: it is accepted only in strict mode (the app's own
 * verified domains, which gmail.com can never be), and each sign-in's `hd` claim (the Workspace domain that manages
 * the account; absent for a personal account, even one made with a company address) must be the e-mail's domain.
 * Microsoft's `common` tenant admits personal accounts and is refused; a Microsoft Entra configuration names its own
 * tenant.
 */
import { parseUrl } from "../../shared/Url.js"

export interface ConsumerIdp {
  readonly name: string
  readonly prefixes: ReadonlyArray<string>
  /**
   * For a provider that serves organisations' accounts beside personal ones: the ID-token claim naming the
   * organisation's domain that manages the account (Google's `hd`). Such a provider is usable in strict mode, each
   * sign-in's claim equal to its e-mail's domain.
   */
  readonly hostedDomainClaim?: string
}

/** The consumer tenant of Microsoft accounts (personal accounts: outlook.com, hotmail.com, live.com). */
export const microsoftConsumersTenant = "9188040d-6c67-4c5b-b112-36a304b66dad"

export const consumerIdps: ReadonlyArray<ConsumerIdp> = [
  {
    name: "Google",
    prefixes: ["https://accounts.google.com", "https://www.accounts.google.com", "https://oauth2.googleapis.com"],
    hostedDomainClaim: "hd"
  },
  {
    name: "Microsoft personal accounts",
    prefixes: [
      "https://login.microsoftonline.com/consumers",
      `https://login.microsoftonline.com/${microsoftConsumersTenant}`,
      "https://login.microsoftonline.com/common",
      "https://login.microsoftonline.com/{tenantid}",
      `https://sts.windows.net/${microsoftConsumersTenant}`,
      "https://login.windows.net/consumers",
      "https://login.windows.net/common",
      "https://login.live.com",
      "https://account.live.com"
    ]
  },
  { name: "Apple", prefixes: ["https://appleid.apple.com"] },
  { name: "Facebook", prefixes: ["https://www.facebook.com", "https://facebook.com", "https://limited.facebook.com"] },
  { name: "Yahoo", prefixes: ["https://api.login.yahoo.com", "https://login.yahoo.com"] },
  { name: "Yahoo! JAPAN", prefixes: ["https://auth.login.yahoo.co.jp"] },
  { name: "Amazon", prefixes: ["https://www.amazon.com", "https://api.amazon.com", "https://na.account.amazon.com", "https://eu.account.amazon.com", "https://apac.account.amazon.com"] },
  { name: "X (Twitter)", prefixes: ["https://twitter.com", "https://x.com", "https://api.twitter.com"] },
  { name: "LinkedIn", prefixes: ["https://www.linkedin.com"] },
  { name: "GitHub", prefixes: ["https://github.com", "https://token.actions.githubusercontent.com"] },
  { name: "GitLab.com", prefixes: ["https://gitlab.com"] },
  { name: "PayPal", prefixes: ["https://www.paypal.com", "https://www.paypalobjects.com", "https://api.paypal.com"] },
  { name: "Twitch", prefixes: ["https://id.twitch.tv"] },
  { name: "Discord", prefixes: ["https://discord.com"] },
  { name: "Slack", prefixes: ["https://slack.com"] },
  { name: "Salesforce (any org)", prefixes: ["https://login.salesforce.com"] },
  { name: "LINE", prefixes: ["https://access.line.me"] },
  { name: "Kakao", prefixes: ["https://kauth.kakao.com"] },
  { name: "Naver", prefixes: ["https://nid.naver.com"] },
  { name: "Yandex", prefixes: ["https://login.yandex.ru", "https://oauth.yandex.ru", "https://oauth.yandex.com"] },
  { name: "Mail.ru", prefixes: ["https://oauth.mail.ru", "https://account.mail.ru"] },
  { name: "VK", prefixes: ["https://id.vk.com", "https://oauth.vk.com"] },
  { name: "AOL", prefixes: ["https://api.login.aol.com", "https://login.aol.com"] }
]

/** `https://host/path` of a URL, host in lower case, no trailing slash, no query; undefined when it is none. */
const locationOf = (url: string): string | undefined => {
  const parsed = parseUrl(url)
  if (parsed === undefined) return undefined
  return `${parsed.protocol}//${parsed.host.toLowerCase()}${decoded(parsed.pathname)}`.replace(/\/+$/, "")
}

/** The path with its percent-escapes decoded (as given when one is malformed). */
const decoded = (path: string): string => {
  try {
    return decodeURIComponent(path)
  } catch {
    return path
  }
}

const prefixes = consumerIdps.flatMap((idp) => idp.prefixes.map((prefix) => ({ idp, prefix: prefix.toLowerCase() })))

/** The consumer provider `url` (a discovery URL or an issuer) belongs to, if any. */
export const consumerProviderOf = (url: string): ConsumerIdp | undefined => {
  const location = locationOf(url)?.toLowerCase()
  if (location === undefined) return undefined
  return prefixes.find(({ prefix }) => location === prefix || location.startsWith(`${prefix}/`))?.idp
}

/** The name of the consumer provider `url` belongs to, if any. */
export const consumerIdpOf = (url: string): string | undefined => consumerProviderOf(url)?.name

/** The claim a sign-in through the provider of `issuer` must hold the e-mail's domain in, if it is such a provider. */
export const hostedDomainClaimOf = (issuer: string): string | undefined => consumerProviderOf(issuer)?.hostedDomainClaim
