/**
 * An e-mail domain as the IdP configuration and domain verification name it: a DNS name in lower case (ASCII; an
 * internationalised name in its `xn--` form), at least two labels, each 1 to 63 letters, digits and hyphens not
 * starting or ending with a hyphen, at most 253 characters, no trailing dot. Domains match exactly: `example.com`
 * and `eu.example.com` are two domains, each verified on its own.
 */
import { Schema } from "effect"

const label = "[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
const domainPattern = new RegExp(`^(?:${label}\\.)+${label}$`)

/** Whether `value` (already lower case) is a domain of this form. */
export const isEmailDomain = (value: string): boolean =>
  value.length <= 253 && domainPattern.test(value) && !/^[0-9.]+$/.test(value)

export const EmailDomain = Schema.compose(Schema.Trim, Schema.Lowercase).pipe(
  Schema.filter(isEmailDomain, {
    message: () => "must be a domain name such as example.com (letters, digits and hyphens in dot-separated labels)"
  }),
  Schema.brand("EmailDomain")
).annotations({
  identifier: "EmailDomain",
  description: "a domain name in lower case (example.com); subdomains are separate domains",
  jsonSchema: { type: "string", maxLength: 253, pattern: domainPattern.source }
})
export type EmailDomain = typeof EmailDomain.Type

/** The domain of an e-mail address (what follows the last `@`, lower-cased), or undefined when it has none. */
export const domainOfEmail = (email: string): string | undefined => {
  const at = email.lastIndexOf("@")
  if (at <= 0 || at === email.length - 1) return undefined
  return email.slice(at + 1).trim().toLowerCase().replace(/\.$/, "")
}
