/**
 * What each kind of client may do, as one value per kind. The authorization server and the client registry read
 * these values instead of asking which kind a client is, so a server for other clients (the partner API's
 * /oauth2/*, with confidential clients) is another set of policies in its profile, not a copy of the rules.
 */
import type { ClientKind } from "./OAuth.js"
import type { RedirectKind } from "./RedirectUris.js"

/**
 * How a client proves who it is at the token endpoint (RFC 6749 2.3), as the discovery document and RFC 7591
 * name the method: `none` for a public client, whose proof is PKCE; `client_secret_basic` (HTTP Basic with the
 * client id and secret, RFC 6749 2.3.1) and `client_secret_post` (the two in the form) for a confidential client.
 */
export type TokenEndpointAuth = "none" | "client_secret_basic" | "client_secret_post"

/** How the client presented itself at the token endpoint: the method it used, its client id and its secret, if any. */
export interface ClientAuthentication {
  readonly method: TokenEndpointAuth
  readonly clientId: string
  readonly secret?: string | undefined
}

export interface ClientPolicy {
  /** The user approves the client on the consent page, every time; without it, signing in approves. */
  readonly consent: boolean
  /** The kinds of redirect URI the client may use and register. */
  readonly redirectKinds: ReadonlyArray<RedirectKind>
  /** With no redirect URI registered, any loopback URI is the client's (a command-line client picks its port). */
  readonly anyLoopbackWithoutRegistration: boolean
  /** May hold the workspace:* scopes the user's role grants. */
  readonly workspaceScopes: boolean
  /** How the client authenticates at the token endpoint (the first: the one its registration shows). */
  readonly tokenEndpointAuth: TokenEndpointAuth
  /** Other methods it may use there. */
  readonly alsoAccepted: ReadonlyArray<TokenEndpointAuth>
  /** PKCE on every authorization request (`required`), or checked only when the request carries a challenge. */
  readonly pkce: "required" | "optional"
  /** An authorization request without `state` is refused (invalid_request). */
  readonly stateRequired: boolean
  /** The redirect URI must equal a registered one character for character, the port of a loopback URI too. */
  readonly exactRedirect: boolean
  /** What the error page says when the client asks for a redirect URI it may not use. */
  readonly redirectRefusal: string
}

/** The policy of each kind of client a server serves; a kind left out is not served (its clients are unknown there). */
export type ClientPolicies = { readonly [Kind in ClientKind]?: ClientPolicy }

/**
 * The first-party server's clients (decisions.md):
 * - `first_party` (the built-in `convene-cli` and those the operator adds): loopback redirect URIs only, any
 *   of them when none is registered; no consent page; workspace scopes when the user's role grants them;
 * - `registered` (RFC 7591): the https, loopback or private-use redirect URIs they registered; the consent page
 *   every time; never a workspace scope.
 * Both are public clients.
 */
export const firstPartyClients: { readonly first_party: ClientPolicy; readonly registered: ClientPolicy } = {
  first_party: {
    consent: false,
    redirectKinds: ["loopback"],
    anyLoopbackWithoutRegistration: true,
    workspaceScopes: true,
    tokenEndpointAuth: "none",
    alsoAccepted: [],
    pkce: "required",
    stateRequired: false,
    exactRedirect: false,
    redirectRefusal:
      "redirect_uri must be a loopback URI (http://127.0.0.1:<port>/... or http://localhost:<port>/...) this application may use"
  },
  registered: {
    consent: true,
    redirectKinds: ["loopback", "https", "private_use"],
    anyLoopbackWithoutRegistration: false,
    workspaceScopes: false,
    tokenEndpointAuth: "none",
    alsoAccepted: [],
    pkce: "required",
    stateRequired: false,
    exactRedirect: false,
    redirectRefusal: "redirect_uri is not one this application registered"
  }
}

/**
 * The partner server's clients (partner-api.md "Authentication", decisions.md): partner apps, confidential clients
 * that authenticate with HTTP Basic (or client_secret_post), use a redirect URI equal to one the operator registered
 * for them, always send `state`, may use PKCE (checked when they do), and get the consent page every time.
 */
export const partnerClients: ClientPolicies = {
  partner: {
    consent: true,
    redirectKinds: ["loopback", "https"],
    anyLoopbackWithoutRegistration: false,
    workspaceScopes: false,
    tokenEndpointAuth: "client_secret_basic",
    alsoAccepted: ["client_secret_post"],
    pkce: "optional",
    stateRequired: true,
    exactRedirect: true,
    redirectRefusal: "redirect_uri is not one registered for this partner app (it must be equal, character for character)"
  }
}
