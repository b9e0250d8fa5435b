/**
 * The OAuth endpoints in the public OpenAPI document. They are served beside the HttpApi contract (their bodies
 * are forms and their errors RFC 6749's `{error, error_description}`, which the contract's envelope is not), so
 * their description is written here, as OpenAPI, and merged into the generated document.
 */
type Json = Record<string, unknown>

const oauthError = { $ref: "#/components/schemas/OAuthError" }
const errorResponse = (description: string): Json => ({ description, content: { "application/json": { schema: oauthError } } })
const form = (schema: Json): Json => ({ required: true, content: { "application/x-www-form-urlencoded": { schema } } })
const json = (description: string, schema: Json, headers?: Json): Json => ({
  description,
  content: { "application/json": { schema } },
  ...(headers === undefined ? {} : { headers })
})
const noStore = { "Cache-Control": { description: "no-store", schema: { type: "string" } } }
const tags = ["OAuth"]

const metadataSchema: Json = {
  type: "object",
  description: "RFC 8414 / OpenID Connect Discovery metadata",
  required: [
    "issuer",
    "authorization_endpoint",
    "token_endpoint",
    "revocation_endpoint",
    "jwks_uri",
    "response_types_supported",
    "grant_types_supported",
    "code_challenge_methods_supported",
    "token_endpoint_auth_methods_supported",
    "id_token_signing_alg_values_supported",
    "subject_types_supported",
    "scopes_supported"
  ],
  properties: {
    issuer: { type: "string", format: "uri", description: "`{base_url}/v1/oauth`" },
    authorization_endpoint: { type: "string", format: "uri" },
    token_endpoint: { type: "string", format: "uri" },
    revocation_endpoint: { type: "string", format: "uri" },
    jwks_uri: { type: "string", format: "uri" },
    registration_endpoint: { type: "string", format: "uri", description: "only in the gateway's documents" },
    response_types_supported: { type: "array", items: { type: "string", enum: ["code"] } },
    grant_types_supported: { type: "array", items: { type: "string", enum: ["authorization_code", "refresh_token"] } },
    code_challenge_methods_supported: { type: "array", items: { type: "string", enum: ["S256"] } },
    token_endpoint_auth_methods_supported: { type: "array", items: { type: "string", enum: ["none"] } },
    revocation_endpoint_auth_methods_supported: { type: "array", items: { type: "string" } },
    id_token_signing_alg_values_supported: { type: "array", items: { type: "string", enum: ["RS256"] } },
    subject_types_supported: { type: "array", items: { type: "string", enum: ["public"] } },
    scopes_supported: { type: "array", items: { type: "string" } },
    response_modes_supported: { type: "array", items: { type: "string" } },
    authorization_response_iss_parameter_supported: { type: "boolean" },
    claims_supported: { type: "array", items: { type: "string" } }
  }
}

export const schemas: Json = {
  OAuthError: {
    type: "object",
    description: "RFC 6749 5.2 (and RFC 7591 3.2.2 for registration)",
    required: ["error", "error_description"],
    properties: {
      error: {
        type: "string",
        enum: [
          "invalid_request",
          "invalid_client",
          "invalid_grant",
          "unsupported_grant_type",
          "invalid_scope",
          "invalid_token",
          "invalid_redirect_uri",
          "invalid_client_metadata",
          "login_required"
        ]
      },
      error_description: { type: "string" }
    }
  },
  TokenResponse: {
    type: "object",
    required: ["access_token", "token_type", "expires_in", "refresh_token", "scope"],
    properties: {
      access_token: { type: "string", description: "svc_at_v1_..., valid 1 hour" },
      token_type: { type: "string", enum: ["Bearer"] },
      expires_in: { type: "integer", enum: [3600] },
      refresh_token: { type: "string", description: "svc_rt_v1_..., valid 30 days, single use (rotated on refresh)" },
      scope: { type: "string", description: "the granted scopes, space-delimited" },
      id_token: { type: "string", description: "RS256 JWT (iss, sub, aud, iat, exp, nonce) when `openid` was granted" }
    }
  },
  AuthorizationServerMetadata: metadataSchema,
  JsonWebKeySet: {
    type: "object",
    required: ["keys"],
    properties: { keys: { type: "array", items: { type: "object", additionalProperties: true } } }
  },
  ClientMetadata: {
    type: "object",
    required: ["redirect_uris"],
    description: "RFC 7591 client metadata; metadata this server does not know is ignored",
    properties: {
      redirect_uris: {
        type: "array",
        minItems: 1,
        maxItems: 20,
        items: { type: "string" },
        description: "https, loopback (http://127.0.0.1:<port>/..., any port at use) or private-use scheme (com.example.app:/cb)"
      },
      client_name: { type: "string", maxLength: 200 },
      client_uri: { type: "string", format: "uri" },
      logo_uri: { type: "string", format: "uri" },
      scope: { type: "string", description: "space-delimited; never a workspace scope" },
      grant_types: { type: "array", items: { type: "string", enum: ["authorization_code", "refresh_token"] } },
      response_types: { type: "array", items: { type: "string", enum: ["code"] } },
      token_endpoint_auth_method: { type: "string", enum: ["none"] },
      client_id: { type: "string", description: "required on PUT: the client's own id" }
    }
  },
  RegisteredClient: {
    type: "object",
    required: ["client_id", "client_id_issued_at", "client_name", "redirect_uris", "grant_types", "response_types", "token_endpoint_auth_method", "registration_client_uri"],
    properties: {
      client_id: { type: "string" },
      client_id_issued_at: { type: "integer" },
      client_name: { type: "string" },
      redirect_uris: { type: "array", items: { type: "string" } },
      grant_types: { type: "array", items: { type: "string" } },
      response_types: { type: "array", items: { type: "string" } },
      token_endpoint_auth_method: { type: "string", enum: ["none"] },
      scope: { type: "string" },
      client_uri: { type: "string" },
      logo_uri: { type: "string" },
      registration_access_token: { type: "string", description: "only in the answer to the registration: shown once" },
      registration_client_uri: { type: "string", format: "uri" }
    }
  }
}

export const securitySchemes: Json = {
  session: {
    type: "http",
    scheme: "bearer",
    description: "The signed-in browser session: the value of the session cookie set by POST /signin"
  },
  registrationAccessToken: {
    type: "http",
    scheme: "bearer",
    description: "The registration access token answered once by POST /v1/oauth/register (RFC 7592)"
  }
}

const clientIdPath = { name: "client_id", in: "path", required: true, schema: { type: "string" } }
const metadataResponse = { "200": json("the metadata", { $ref: "#/components/schemas/AuthorizationServerMetadata" }), "404": errorResponse("never: documented for completeness") }

export const paths: Json = {
  "/v1/oauth/authorize": {
    get: {
      tags,
      operationId: "oauth.authorize",
      summary: "Authorization endpoint (browser)",
      description:
        "Served on the auth URL (CONVENE_AUTH_URL, default the base URL). OAuth 2.1 authorization code with PKCE (S256 " +
        "only). 302 to `redirect_uri` with `code`, `state` and `iss` when approved, or with `error`; 302 to " +
        "`/signin?continue=...` for a browser without a session; the consent page for registered clients; 401 " +
        "`login_required` for a request that is not a browser's (or with browser sign-in off); a 400 HTML page, never a " +
        "redirect, for an unknown client_id or a redirect_uri the client may not use.",
      security: [],
      parameters: [
        { name: "client_id", in: "query", required: true, schema: { type: "string" } },
        { name: "redirect_uri", in: "query", required: true, schema: { type: "string" } },
        { name: "response_type", in: "query", required: true, schema: { type: "string", enum: ["code"] } },
        { name: "scope", in: "query", required: true, schema: { type: "string" }, description: "space-delimited; `openid` adds an ID token" },
        { name: "code_challenge", in: "query", required: true, schema: { type: "string", pattern: "^[A-Za-z0-9_-]{43}$" } },
        { name: "code_challenge_method", in: "query", required: true, schema: { type: "string", enum: ["S256"] } },
        { name: "state", in: "query", required: false, schema: { type: "string" } },
        { name: "nonce", in: "query", required: false, schema: { type: "string", maxLength: 255 } },
        {
          name: "resource",
          in: "query",
          required: false,
          schema: { type: "string" },
          description: "RFC 8707 resource indicator (an MCP client sends the MCP endpoint's URL): accepted and ignored; " +
            "Convene's tokens are good at /v1 and at the MCP endpoint alike, as their scopes say"
        }
      ],
      responses: {
        "200": { description: "the consent page (registered clients): an HTML form", content: { "text/html": { schema: { type: "string" } } } },
        "302": { description: "back to the client (code or error), or to the sign-in page" },
        "400": { description: "unknown client or redirect URI: an HTML page", content: { "text/html": { schema: { type: "string" } } } },
        "401": errorResponse("no session and not a browser (login_required)")
      }
    },
    post: {
      tags,
      operationId: "oauth.consent",
      summary: "Consent decision (browser form)",
      description:
        "The consent page's form: `csrf` (equal to the CSRF cookie), `request` (the authorization request's query, " +
        "checked again in full) and `decision` (`approve` or `deny`). 303 back to the client with a code or " +
        "`error=access_denied`; 403 (HTML) for a form from another site or without the CSRF cookie.",
      security: [{ session: [] }],
      requestBody: form({
        type: "object",
        required: ["csrf", "request", "decision"],
        properties: {
          csrf: { type: "string" },
          request: { type: "string" },
          decision: { type: "string", enum: ["approve", "deny"] }
        }
      }),
      responses: {
        "303": { description: "back to the client, or to the sign-in page when the session ended" },
        "400": { description: "no decision, or a request that cannot go back to its client: an HTML page", content: { "text/html": { schema: { type: "string" } } } },
        "403": { description: "not this site's form", content: { "text/html": { schema: { type: "string" } } } }
      }
    }
  },
  "/v1/oauth/token": {
    post: {
      tags,
      operationId: "oauth.token",
      summary: "Token endpoint",
      description:
        "Public clients (no secret). `authorization_code`: the code (10 minutes, single use: a second use revokes what " +
        "the first issued), the PKCE verifier, and the client_id and redirect_uri of the authorization request. " +
        "`refresh_token`: rotates (the old refresh token is revoked; presenting it again revokes the whole chain). " +
        "A repeated parameter is invalid_request.",
      security: [],
      requestBody: form({
        type: "object",
        required: ["grant_type"],
        properties: {
          grant_type: { type: "string", enum: ["authorization_code", "refresh_token"] },
          code: { type: "string" },
          code_verifier: { type: "string", minLength: 43, maxLength: 128 },
          client_id: { type: "string" },
          redirect_uri: { type: "string" },
          refresh_token: { type: "string" },
          scope: { type: "string", description: "refresh only: narrow the new tokens' scopes" },
          resource: { type: "string", description: "RFC 8707 resource indicator: accepted and ignored (see the authorization endpoint)" }
        }
      }),
      responses: {
        "200": json("the tokens", { $ref: "#/components/schemas/TokenResponse" }, noStore),
        "400": errorResponse("invalid_request, invalid_grant, invalid_scope, unsupported_grant_type"),
        "401": errorResponse("invalid_client: the client_id is unknown")
      }
    }
  },
  "/v1/oauth/revoke": {
    post: {
      tags,
      operationId: "oauth.revoke",
      summary: "Revoke a token and its chain (RFC 7009)",
      description:
        "Revokes the signed-in user's token with every token of its grant (the rotation chain). 200 for any token, " +
        "known or not. Needs the session: `Authorization: Bearer <session token>` or the session cookie.",
      security: [{ session: [] }],
      requestBody: form({
        type: "object",
        required: ["token"],
        properties: { token: { type: "string" }, token_type_hint: { type: "string", description: "accepted and ignored" } }
      }),
      responses: {
        "200": { description: "revoked, or nothing to revoke" },
        "400": errorResponse("invalid_request: not a form, or no token"),
        "401": errorResponse("invalid_token: no signed-in session")
      }
    }
  },
  "/v1/oauth/.well-known/openid-configuration": {
    get: {
      tags,
      operationId: "oauth.discovery",
      summary: "Discovery document",
      description: "The authorization server's metadata (issuer `{base_url}/v1/oauth`).",
      security: [],
      responses: metadataResponse
    }
  },
  "/.well-known/oauth-authorization-server": {
    get: {
      tags,
      operationId: "oauth.gatewayMetadata",
      summary: "Gateway metadata (RFC 8414)",
      description:
        "The same metadata with `registration_endpoint`, for clients that register themselves (MCP clients). Also at " +
        "/.well-known/oauth-authorization-server/v1/oauth and /.well-known/openid-configuration.",
      security: [],
      responses: metadataResponse
    }
  },
  "/v1/oauth/.well-known/jwks.json": {
    get: {
      tags,
      operationId: "oauth.jwks",
      summary: "Signing keys (JWKS)",
      description: "The RS256 public keys of ID tokens: the active key, and a retired one for an hour after rotation.",
      security: [],
      responses: {
        "200": json("the key set", { $ref: "#/components/schemas/JsonWebKeySet" }),
        "404": errorResponse("never: documented for completeness")
      }
    }
  },
  "/v1/oauth/register": {
    post: {
      tags,
      operationId: "oauth.register",
      summary: "Register a client (RFC 7591)",
      description:
        "Open registration of a public client. Registered clients see a consent page on every authorization and never " +
        "get a workspace scope. The registration access token is answered once.",
      security: [],
      requestBody: { required: true, content: { "application/json": { schema: { $ref: "#/components/schemas/ClientMetadata" } } } },
      responses: {
        "201": json("the client", { $ref: "#/components/schemas/RegisteredClient" }, noStore),
        "400": errorResponse("invalid_redirect_uri or invalid_client_metadata")
      }
    }
  },
  "/v1/oauth/register/{client_id}": {
    get: {
      tags,
      operationId: "oauth.readClient",
      summary: "Read a registered client (RFC 7592)",
      description: "The client's metadata, with its registration access token.",
      security: [{ registrationAccessToken: [] }],
      parameters: [clientIdPath],
      responses: {
        "200": json("the client", { $ref: "#/components/schemas/RegisteredClient" }),
        "401": errorResponse("invalid_token")
      }
    },
    put: {
      tags,
      operationId: "oauth.updateClient",
      summary: "Replace a registered client's metadata (RFC 7592)",
      description: "The body replaces the metadata; it must carry the client's own client_id.",
      security: [{ registrationAccessToken: [] }],
      parameters: [clientIdPath],
      requestBody: { required: true, content: { "application/json": { schema: { $ref: "#/components/schemas/ClientMetadata" } } } },
      responses: {
        "200": json("the client", { $ref: "#/components/schemas/RegisteredClient" }),
        "400": errorResponse("invalid_redirect_uri or invalid_client_metadata"),
        "401": errorResponse("invalid_token")
      }
    },
    delete: {
      tags,
      operationId: "oauth.deleteClient",
      summary: "Delete a registered client (RFC 7592)",
      description: "Revokes every token issued to the client and deletes it.",
      security: [{ registrationAccessToken: [] }],
      parameters: [clientIdPath],
      responses: { "204": { description: "deleted" }, "401": errorResponse("invalid_token") }
    }
  }
}

export const tag = {
  name: "OAuth",
  description:
    "The first-party OAuth 2.1 authorization server (authorization code with PKCE, refresh-token rotation, revocation, " +
    "ID tokens, dynamic client registration). People sign in at /signin; their tokens are listed at /account."
}

/** The document with the OAuth paths, schemas, security schemes and tag merged in. */
export const merge = (spec: Record<string, unknown>): Record<string, unknown> => {
  const components = (spec.components ?? {}) as Json
  return {
    ...spec,
    tags: [...((spec.tags ?? []) as Array<unknown>), tag],
    paths: { ...(spec.paths as Json), ...paths },
    components: {
      ...components,
      schemas: { ...(components.schemas as Json), ...schemas },
      securitySchemes: { ...(components.securitySchemes as Json), ...securitySchemes }
    }
  }
}
