/**
 * A partner app's identity-provider configuration (partner document: "IdP configuration"; one per app, type always
 * `oidc`), as stored. The request and answer shapes, and the rules that guard them, are IdpConfigs'.
 */
import { Schema } from "effect"
import { Uuid } from "../../shared/Ids.js"
import { Timestamp } from "../../shared/Time.js"
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
