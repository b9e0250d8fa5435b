/**
 * A partner app's identity-provider configuration (partner document: "IdP configuration"; one per app, type always
 * `oidc`), as stored. The request and answer shapes, and the rules that guard them, are IdpConfigs'.
 */
import { Schema } from "effect"
import { Uuid } from "../../shared/Ids.js"
import { requestBody, Text, Title } from "../../shared/Text.js"
import { Timestamp } from "../../shared/Time.js"
import { trusted } from "../../shared/Trusted.js"
import { httpsUrlProblem, parseUrl } from "../../shared/Url.js"
import { PartnerAppId } from "../PartnerApp.js"
import { EmailDomain } from "./EmailDomain.js"

export const IdpConfigId = Uuid.pipe(Schema.brand("IdpConfigId"))
export type IdpConfigId = typeof IdpConfigId.Type

/**
 * `strict`: at least one allowed domain, no generic domain, each domain verified by the app and claimed by no other
 * app. `partner_managed`: the list is optional (when given, the same rules); empty, the IdP decides who signs in.
 */
export const IdpMode = Schema.Literal("strict", "partner_managed").annotations({ identifier: "IdpMode" })
export type IdpMode = typeof IdpMode.Type

/** Which ID-token claims give the user's e-mail (required) and names. */
export const ClaimMappings = Schema.Struct({
  email: Schema.String,
  name: Schema.optional(Schema.String),
  given_name: Schema.optional(Schema.String),
  family_name: Schema.optional(Schema.String)
}).annotations({ identifier: "ClaimMappings" })
export type ClaimMappings = typeof ClaimMappings.Type

export class IdpConfig extends Schema.Class<IdpConfig>("IdpConfig")({
  id: IdpConfigId,
  partner_app_id: PartnerAppId,
  name: Schema.String,
  discovery_url: Schema.String,
  idp_client_id: Schema.String,
  /** The IdP's client secret, sealed by the SecretVault (never returned, never logged). */
  sealed_client_secret: Schema.String,
  scopes: Schema.Array(Schema.String),
  claim_mappings: ClaimMappings,
  mode: IdpMode,
  allowed_email_domains: Schema.Array(EmailDomain),
  is_active: Schema.Boolean,
  /** From the discovery document (cached; refreshed in the background and on demand). */
  issuer: Schema.String,
  authorization_endpoint: Schema.String,
  token_endpoint: Schema.String,
  userinfo_endpoint: Schema.NullOr(Schema.String),
  jwks_uri: Schema.String,
  discovery_last_fetched_at: Timestamp,
  created_at: Timestamp,
  updated_at: Timestamp
}) {}

// ---- requests and answers (IdpConfigs' rules; decisions in the README's "IdP configuration") ----

/** The longest name of a configuration (partner document: 1 to 255 characters). */
export const MAX_IDP_NAME_LENGTH = 255
/** At most this many scopes, and this many allowed e-mail domains. */
export const MAX_IDP_SCOPES = 32
export const MAX_IDP_DOMAINS = 100

/** What a configuration asks for when the request leaves `scopes` out. */
export const defaultScopes: ReadonlyArray<string> = ["openid", "email", "profile"]
/** What a configuration maps when the request leaves `claim_mappings` out. */
export const defaultClaimMappings: ClaimMappings = { email: "email", name: "name" }

/** The suffix of an OIDC discovery URL (OpenID Connect Discovery 1.0, section 4). */
export const discoverySuffix = "/.well-known/openid-configuration"

const IdpName = Title(MAX_IDP_NAME_LENGTH).annotations({ description: `1 to ${MAX_IDP_NAME_LENGTH} characters (trimmed)` })

const DiscoveryUrl = Text.pipe(Schema.maxLength(2048, { message: () => "must be at most 2048 characters" })).annotations({
  description: `the identity provider's OIDC discovery URL: https://<issuer>${discoverySuffix} (no query or fragment)`,
  examples: ["https://acme.okta.com/.well-known/openid-configuration"]
})

/**
 * Why `url` is not a discovery URL (an absolute HTTPS URL without user information, query or fragment, ending in the
 * discovery suffix), or undefined when it is one. Checked by IdpConfigs after the body decodes (so that a body's other
 * fields are named first, as its schema describes them).
 */
export const discoveryUrlProblem = (url: string): string | undefined => {
  const problem = httpsUrlProblem(url)
  if (problem !== undefined) return problem
  const parsed = parseUrl(url)
  if (parsed !== undefined && (parsed.search !== "" || parsed.hash !== "" || url.includes("?") || url.includes("#"))) {
    return "must have no query or fragment"
  }
  return url.endsWith(discoverySuffix) ? undefined : `must end with ${discoverySuffix}`
}

/** A client id or secret: 1 to `max` characters, kept as given. */
const Credential = (max: number) =>
  Text.pipe(
    Schema.minLength(1, { message: () => "must not be empty" }),
    Schema.maxLength(max, { message: () => `must be at most ${max} characters` })
  )

/** An OAuth scope token (RFC 6749 section 3.3: printable ASCII but space, `"` and `\`). */
const Scope = Schema.String.pipe(
  Schema.pattern(/^[\x21\x23-\x5B\x5D-\x7E]{1,128}$/, {
    message: () => "must be 1 to 128 printable ASCII characters other than space, \" and \\"
  })
)

const Scopes = Schema.Array(Scope).pipe(
  Schema.minItems(1, { message: () => "must list at least openid" }),
  Schema.maxItems(MAX_IDP_SCOPES, { message: () => `may list at most ${MAX_IDP_SCOPES} scopes` })
).annotations({ description: "the scopes asked of the identity provider; must include openid (default openid, email, profile)" })

/** A claim name of the ID token: 1 to 255 printable characters without white space. */
const ClaimName = Text.pipe(
  Schema.pattern(/^[^\s\u0000-\u001F\u007F]{1,255}$/u, { message: () => "must be a claim name: 1 to 255 characters without white space" })
)

export class ClaimMappingsInput extends Schema.Class<ClaimMappingsInput>("ClaimMappingsInput")({
  email: ClaimName.annotations({ description: "the claim holding the user's e-mail address (required)" }),
  name: Schema.optional(ClaimName),
  given_name: Schema.optional(ClaimName),
  family_name: Schema.optional(ClaimName)
}, requestBody) {}

const Domains = Schema.Array(EmailDomain).pipe(
  Schema.maxItems(MAX_IDP_DOMAINS, { message: () => `may list at most ${MAX_IDP_DOMAINS} domains` })
).annotations({ description: "e-mail domains whose users may sign in (required and non-empty in strict mode)" })

/** POST /v1/partner/admin/idp. */
export class CreateIdpConfig extends Schema.Class<CreateIdpConfig>("CreateIdpConfig")({
  name: IdpName,
  discovery_url: DiscoveryUrl,
  idp_client_id: Credential(512).annotations({ description: "the client id at the identity provider (not the partner app's)" }),
  idp_client_secret: Credential(2048).annotations({ description: "the client secret at the identity provider; stored encrypted, never returned" }),
  scopes: Schema.optional(Scopes),
  claim_mappings: Schema.optional(ClaimMappingsInput),
  mode: IdpMode,
  allowed_email_domains: Schema.optional(Domains)
}, requestBody) {}

/** PUT /v1/partner/admin/idp: every field optional; what is left out stays. */
export class UpdateIdpConfig extends Schema.Class<UpdateIdpConfig>("UpdateIdpConfig")({
  name: Schema.optional(IdpName),
  discovery_url: Schema.optional(DiscoveryUrl),
  idp_client_id: Schema.optional(Credential(512)),
  idp_client_secret: Schema.optional(Credential(2048)),
  scopes: Schema.optional(Scopes),
  claim_mappings: Schema.optional(ClaimMappingsInput),
  mode: Schema.optional(IdpMode),
  allowed_email_domains: Schema.optional(Domains),
  is_active: Schema.optional(Schema.Boolean)
}, requestBody) {}

/** The configuration as the API shows it: never the secret, nor its sealed form. */
export class IdpConfigView extends Schema.Class<IdpConfigView>("IdpConfigView")({
  id: IdpConfigId,
  partner_app_id: PartnerAppId,
  name: Schema.String,
  type: Schema.Literal("oidc"),
  discovery_url: Schema.String,
  idp_client_id: Schema.String,
  scopes: Schema.Array(Schema.String),
  claim_mappings: ClaimMappings,
  mode: IdpMode,
  allowed_email_domains: Schema.Array(Schema.String),
  is_active: Schema.Boolean,
  issuer: Schema.String,
  authorization_endpoint: Schema.String,
  token_endpoint: Schema.String,
  userinfo_endpoint: Schema.NullOr(Schema.String),
  jwks_uri: Schema.String,
  discovery_last_fetched_at: Timestamp,
  created_at: Timestamp,
  updated_at: Timestamp
}) {
  static readonly of = (config: IdpConfig) => {
    const { sealed_client_secret: _sealed, ...shown } = config
    return new IdpConfigView({ ...shown, type: "oidc" }, trusted)
  }
}

/**
 * A refusal of an IdP configuration operation, with the partner document's code ("IdP operation errors"); the host
 * gives each code its status. `invalid_request_body` names the field (`field`); messages never hold a secret.
 */
export class IdpConfigRefused extends Schema.TaggedError<IdpConfigRefused>()("IdpConfigRefused", {
  code: Schema.Literal(
    "invalid_request_body",
    "invalid_idp_credentials",
    "invalid_idp",
    "domain_is_generic",
    "strict_mode_requires_domains",
    "domain_not_verified",
    "discovery_fetch_failed",
    "idp_config_not_found",
    "idp_config_exists",
    "domain_already_claimed",
    "secrets_key_not_configured"
  ),
  message: Schema.String
}) {}
export type IdpRefusalCode = IdpConfigRefused["code"]
