/**
 * The authorization server's pages, rendered on the server: sign-in, consent, the account's tokens and the
 * error page for requests that cannot go back to their client. Each function is pure: data in, a `Page` out
 * (status, document, Content-Security-Policy); the routes decide what to show and serve it with `headers(page)`
 * as `text/html; charset=utf-8`. No page has a script or an inline style: the one stylesheet is
 * /assets/convene.css (Stylesheet.ts), and every value shown passes through `html`'s escaping.
 *
 * The forms, as the routes read them (application/x-www-form-urlencoded):
 * - POST /signin: `email`, `password`, `continue` (where to go next, as given to `signIn`), `csrf`;
 * - POST /v1/oauth/authorize (and the partner server's POST /oauth2/authorize): `csrf`, `request` (the opaque
 *   token given to `consent`), `decision` (`approve` or `deny`, from the button pressed);
 * - POST /account/tokens: `csrf`, `name`, `kind` (`short_lived` or `personal_access_token`), `scopes` (once per
 *   ticked scope), `expiry_hours` (1, 2, 4 or 6) and `expiry_days` (30, 60, 90, 180 or 365): both selects are
 *   sent (the personal access token's one not when that kind is unavailable); the one of the chosen kind
 *   applies, as in core's `IssueToken`;
 * - POST /account/tokens/{id}/delete and POST /signout: `csrf`.
 */
import { DateTime } from "effect"
import { html, type Html, render } from "./Html.js"
import * as Stylesheet from "./Stylesheet.js"

/** A rendered page: serve `html` with `status` and `headers(page)`. */
export interface Page {
  readonly status: number
  /** The whole document, from `<!doctype html>`. */
  readonly html: string
  /** The value of the page's Content-Security-Policy header. */
  readonly contentSecurityPolicy: string
}

export const contentType = "text/html; charset=utf-8"

/** Where the pages' forms post. */
export const actions = {
  signIn: "/signin",
  signOut: "/signout",
  authorize: "/v1/oauth/authorize",
  partnerAuthorize: "/oauth2/authorize",
  issueToken: "/account/tokens",
  deleteToken: (id: string): string => `/account/tokens/${encodeURIComponent(id)}/delete`
} as const

/**
 * The headers every page is served with besides its policy: no MIME sniffing, no Referer to another site
 * wherever a link or redirect leads (the consent page's request token never leaves in one; `same-origin`, not
 * `no-referrer`, because under `no-referrer` browsers send `Origin: null` on the pages' own form posts, which the
 * CSRF check must be able to tell from another site's), never cached (the pages carry CSRF tokens and, once, a
 * new token), never framed (also for browsers without `frame-ancestors`).
 */
export const securityHeaders = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "same-origin",
  "cache-control": "no-store",
  "x-frame-options": "DENY"
} as const

/** Everything to set on a page's response but its content type. */
export const headers = (page: Page): Record<string, string> => ({
  ...securityHeaders,
  "content-security-policy": page.contentSecurityPolicy
})

// A source expression goes into a header: one with a space, `;`, `,` or a quote would add sources or directives.
const unsafeSource = /[^\x21-\x7e]|[;,'"]/

/**
 * The pages' policy: nothing but this server's stylesheet and images (and `data:` images: the pages' empty icon,
 * `<link rel="icon" href="data:,">`, which keeps browsers from asking for /favicon.ico, is an image load that
 * Chromium checks against img-src), forms posting to this server (and to
 * `formActionSources`: Chromium applies form-action to the redirect that answers a POST, so the consent page
 * lists where the authorization response will send the browser), no <base>, never framed. Throws on a source
 * that is not one plain source expression: the caller promised validated ones.
 */
export const contentSecurityPolicy = (formActionSources: ReadonlyArray<string> = []): string => {
  for (const source of formActionSources) {
    if (source === "" || unsafeSource.test(source)) {
      throw new Error(`not a plain CSP source expression: ${JSON.stringify(source)}`)
    }
  }
  const formAction = ["'self'", ...new Set(formActionSources)]
  return [
    "default-src 'none'",
    "style-src 'self'",
    "img-src 'self' data:",
    `form-action ${formAction.join(" ")}`,
    "base-uri 'none'",
    "frame-ancestors 'none'"
  ].join("; ")
}

/** A message about one field of a form (`form`: about the whole form, shown above it). */
export interface FieldError<Field extends string> {
  readonly field: Field | "form"
  readonly message: string
}

/** A time as given (RFC 3339 text, or a DateTime), shown to the minute in UTC. */
export type Instant = string | DateTime.Utc

const layout = (options: {
  readonly title: string
  readonly header?: Html
  readonly wide?: boolean
  readonly body: Html
}): string =>
  render(html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · Convene</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${Stylesheet.path}">
</head>
<body>
<header>
<p class="brand">Convene</p>
${options.header}
</header>
<main${options.wide === true && html` class="wide"`}>
${options.body}
</main>
</body>
</html>
`)

const page = (status: number, document: string, formActionSources: ReadonlyArray<string> = []): Page => ({
  status,
  html: document,
  contentSecurityPolicy: contentSecurityPolicy(formActionSources)
})

const errorId = (field: string) => `${field}-error`

/** The error's message under its field, linked from the field by `invalid`. */
const fieldMessage = <Field extends string>(error: FieldError<Field> | undefined, field: Field) =>
  error?.field === field && html`<p id="${errorId(field)}" class="field-error" role="alert">${error.message}</p>`

/** A form-level error, above the form. */
const formMessage = <Field extends string>(error: FieldError<Field> | undefined) =>
  error?.field === "form" && html`<div id="form-error" class="alert" role="alert"><p>${error.message}</p></div>`

/** `aria-invalid` and `aria-describedby` (the error's message and any hints) for a field's control. */
const describe = <Field extends string>(
  error: FieldError<Field> | undefined,
  field: Field,
  hints: ReadonlyArray<string> = []
): Html => {
  const invalid = error?.field === field
  const ids = [...hints, ...(invalid ? [errorId(field)] : [])]
  return html`${invalid && html` aria-invalid="true"`}${ids.length > 0 && html` aria-describedby="${ids.join(" ")}"`}`
}

/** `aria-describedby` for a fieldset (a group takes no `aria-invalid`; its controls do). */
const describeGroup = <Field extends string>(error: FieldError<Field> | undefined, field: Field) =>
  error?.field === field && html` aria-describedby="${errorId(field)}"`

const hidden = (name: string, value: string) => html`<input type="hidden" name="${name}" value="${value}">`

const signedInAs = (userEmail: string) => html`<p>Signed in as <strong>${userEmail}</strong></p>`

const showInstant = (instant: Instant): Html => {
  const iso = typeof instant === "string" ? instant : DateTime.formatIso(instant)
  const date = new Date(iso)
  const shown = Number.isNaN(date.getTime()) ? iso : `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`
  return html`<time datetime="${iso}">${shown}</time>`
}

// ---------------------------------------------------------------------------------------------------------------
// Sign-in

export type SignInField = "email" | "password"

export interface SignIn {
  /** Where to go once signed in: sent back as the `continue` field. */
  readonly continueUrl: string
  readonly csrfToken: string
  /** The e-mail address to fill in again (never the password). */
  readonly email?: string
  /** e.g. `{ field: "form", message: "Wrong e-mail or password." }` */
  readonly error?: FieldError<SignInField>
  /** A message that is not an error, e.g. "You have signed out." */
  readonly notice?: string
  /** Default: 200, or 400 with an error (e.g. 429 for too many attempts). */
  readonly status?: number
}

/** The sign-in form, posting to /signin. */
export const signIn = (input: SignIn): Page => {
  const { error } = input
  return page(
    input.status ?? (error === undefined ? 200 : 400),
    layout({
      title: "Sign in",
      body: html`<h1>Sign in</h1>
${input.notice !== undefined && html`<p class="notice" role="status">${input.notice}</p>`}
${formMessage(error)}
<form method="post" action="${actions.signIn}"${error?.field === "form" && html` aria-describedby="form-error"`}>
${hidden("csrf", input.csrfToken)}
${hidden("continue", input.continueUrl)}
<div class="field">
<label for="email">E-mail address</label>
<input id="email" name="email" type="email" autocomplete="username" autocapitalize="none" spellcheck="false" required value="${input.email ?? ""}"${describe(error, "email")}>
${fieldMessage(error, "email")}
</div>
<div class="field">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${describe(error, "password")}>
${fieldMessage(error, "password")}
</div>
<div class="actions"><button type="submit">Sign in</button></div>
</form>`
    })
  )
}

// ---------------------------------------------------------------------------------------------------------------
// Consent

export interface ScopeDescription {
  readonly scope: string
  /** What the scope lets the application do, in words, e.g. "See your meetings". */
  readonly description: string
}

export interface Consent {
  /** The name the client registered (its own claim). */
  readonly clientName: string
  /** The client's home page, as registered; shown as a link only when it is http or https. */
  readonly clientUri?: string | null
  /** The origin of the redirect URI (e.g. `https://app.example.com`, `com.example.app:`). */
  readonly redirectOrigin: string
  readonly scopes: ReadonlyArray<ScopeDescription>
  readonly csrfToken: string
  /** The opaque token naming the pending authorization request. */
  readonly requestToken: string
  readonly userEmail: string
  /** Validated CSP source expressions for the redirect (e.g. `https://app.example.com`, `http://127.0.0.1:*`). */
  readonly formActionSources: ReadonlyArray<string>
  /**
   * A partner app (the partner server's consent): the operator added it, and approving connects the user's
   * workspace (named here) to it. Without it, the client registered itself (a third party).
   */
  readonly partner?: { readonly workspaceName: string } | undefined
}

const webLink = (uri: string): Html => {
  try {
    const url = new URL(uri)
    if (url.protocol === "https:" || url.protocol === "http:") {
      return html`<a href="${url.href}" rel="noopener noreferrer">${uri}</a>`
    }
  } catch {
    // not a URL: shown as text
  }
  return html`<code>${uri}</code>`
}

/** The consent page for a registered (third-party) client: approve or deny, posting to /v1/oauth/authorize. */
export const consent = (input: Consent): Page =>
  page(
    200,
    layout({
      title: `Allow ${input.clientName}?`,
      header: signedInAs(input.userEmail),
      body: html`<h1>Allow <q>${input.clientName}</q> to use your Convene account?</h1>
<p>The application <strong>${input.clientName}</strong>${
        input.clientUri !== undefined && input.clientUri !== null && input.clientUri !== "" &&
        html` (${webLink(input.clientUri)})`
      } asks to act as <strong>${input.userEmail}</strong>${
        input.scopes.length === 0 ? html`, with no permissions beyond that.</p>` : html`, with these permissions:</p>
<ul class="scopes">
${input.scopes.map((scope) => html`<li>${scope.description} <code>${scope.scope}</code></li>\n`)}</ul>`
      }
${
        input.partner === undefined
          ? html`<div class="warning">
<p><strong>Allow only applications you trust.</strong> This application was registered by a third party, not by
the people who run this Convene installation; its name is what it calls itself.</p>
<p>Whichever you choose, your browser will then be sent to <strong>${input.redirectOrigin}</strong>.</p>
</div>`
          : html`<div class="warning">
<p><strong>${input.clientName}</strong> is a partner app that the people who run this Convene installation added.
Approving connects your workspace <strong>${input.partner.workspaceName}</strong> to it.</p>
<p>Whichever you choose, your browser will then be sent to <strong>${input.redirectOrigin}</strong>.</p>
</div>`
      }
<form method="post" action="${input.partner === undefined ? actions.authorize : actions.partnerAuthorize}">
${hidden("csrf", input.csrfToken)}
${hidden("request", input.requestToken)}
<div class="actions">
<button type="submit" name="decision" value="approve">Approve</button>
<button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</div>
</form>`
    }),
    input.formActionSources
  )

// ---------------------------------------------------------------------------------------------------------------
// Error

export interface ErrorPage {
  readonly status: number
  /** e.g. "Unknown application" */
  readonly title: string
  /** What is wrong, in plain words, e.g. "This sign-in link names an application this server does not know." */
  readonly message: string
}

/** A request that cannot be answered to its client (unknown client, unregistered redirect URI, ...). */
export const error = (input: ErrorPage): Page =>
  page(
    input.status,
    layout({
      title: input.title,
      body: html`<h1>${input.title}</h1>
<p>${input.message}</p>
<p class="muted">You can close this page. (Error ${input.status})</p>`
    })
  )

// ---------------------------------------------------------------------------------------------------------------
// Partner single sign-on, desktop target

export interface SsoFinished {
  /** The partner app's name. */
  readonly app: string
  /** Whether the user was signed in. */
  readonly signedIn: boolean
  /** Why not, in plain words (when not signed in). */
  readonly reason?: string | undefined
}

/** Where a desktop app's single sign-on ends: the user goes back to the app, which learns the outcome by polling. */
export const ssoFinished = (input: SsoFinished): Page =>
  page(
    200,
    layout({
      title: input.signedIn ? "Signed in" : "Sign-in failed",
      body: input.signedIn
        ? html`<h1>Signed in</h1>
<p>You are signed in to ${input.app}. Return to ${input.app} to continue.</p>
<p class="muted">You can close this page.</p>`
        : html`<h1>Sign-in failed</h1>
<p>${input.reason ?? "The sign-in could not be completed."}</p>
<p class="muted">Return to ${input.app} to try again. You can close this page.</p>`
    })
  )

// ---------------------------------------------------------------------------------------------------------------
// Account: the user's tokens

export type TokenKindChoice = "short_lived" | "personal_access_token"

export type AccountField = "name" | "kind" | "scopes" | "expiry_hours" | "expiry_days"

export const expiryHours = [1, 2, 4, 6] as const
export const expiryDays = [30, 60, 90, 180, 365] as const

export interface TokenRow {
  readonly id: string
  readonly name: string | null
  readonly kind: string
  readonly scopes: ReadonlyArray<string>
  readonly expires_at: Instant | null
  readonly created_at: Instant
}

export interface ScopeChoice extends ScopeDescription {
  /** Whether the user's role lets them grant it (not: disabled). */
  readonly allowed: boolean
  /** Whether only a personal access token may hold it (the workspace scopes). */
  readonly personalAccessTokenOnly?: boolean
}

export interface Account {
  readonly userEmail: string
  readonly csrfToken: string
  /** The user's live tokens. */
  readonly tokens: ReadonlyArray<TokenRow>
  /** A token just issued: its only showing. */
  readonly issued?: { readonly token: string; readonly kind: string; readonly expires_at: Instant | null }
  readonly error?: FieldError<AccountField>
  /** What the user chose, to fill the form in again after an error. */
  readonly values?: {
    readonly name?: string
    readonly kind?: TokenKindChoice
    readonly scopes?: ReadonlyArray<string>
    readonly expiry_hours?: number
    readonly expiry_days?: number
  }
  readonly scopeChoices: ReadonlyArray<ScopeChoice>
  /** Whether the workspace's plan includes personal access tokens. */
  readonly personalAccessTokensAllowed: boolean
  /** Why not, or what the plan allows (e.g. "Personal access tokens come with the Pro plan."). */
  readonly planMessage?: string
  /** Default: 200, or 400 with an error. */
  readonly status?: number
}

const kindNames: Record<string, string> = {
  short_lived: "short-lived token",
  personal_access_token: "personal access token",
  access_token: "OAuth access token",
  refresh_token: "refresh token",
  api_key: "workspace API key"
}
/** The kind in words, e.g. "short-lived token" (capitalized: at the start of a sentence or a cell). */
const kindName = (kind: string, capitalized = false) => {
  const name = kindNames[kind] ?? kind
  return capitalized ? name.charAt(0).toUpperCase() + name.slice(1) : name
}

const plural = (count: number, unit: string) => `${count} ${unit}${count === 1 ? "" : "s"}`

const select = (options: {
  readonly field: AccountField
  readonly label: string
  readonly choices: ReadonlyArray<number>
  readonly unit: string
  readonly selected: number | undefined
  readonly disabled: boolean
  readonly error: FieldError<AccountField> | undefined
}) =>
  html`<div class="field">
<label for="${options.field}">${options.label}</label>
<select id="${options.field}" name="${options.field}"${options.disabled && html` disabled`}${describe(options.error, options.field)}>
${options.choices.map((choice) =>
    html`<option value="${choice}"${choice === options.selected && html` selected`}>${plural(choice, options.unit)}</option>\n`
  )}</select>
${fieldMessage(options.error, options.field)}
</div>`

const issuedToken = (issued: NonNullable<Account["issued"]>) =>
  html`<section class="issued" aria-labelledby="issued-heading">
<h2 id="issued-heading">Token issued</h2>
<div class="field">
<label for="issued-token">Your new ${kindName(issued.kind)}</label>
<input id="issued-token" type="text" readonly value="${issued.token}" autocomplete="off" spellcheck="false" aria-describedby="issued-note">
</div>
<p id="issued-note" class="hint"><strong>Copy it now: it will not be shown again.</strong> ${
    issued.expires_at === null ? "It does not expire." : html`It expires at ${showInstant(issued.expires_at)}.`
  }</p>
</section>`

const tokenTable = (tokens: ReadonlyArray<TokenRow>, csrfToken: string) =>
  tokens.length === 0
    ? html`<p class="muted">You have no live tokens.</p>`
    : html`<div class="table-wrap">
<table>
<thead><tr><th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Scopes</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>
${
      tokens.map((token) => {
        const name = token.name ?? kindName(token.kind, true)
        return html`<tr>
<td>${token.name ?? html`<span class="muted">(no name)</span>`}</td>
<td>${kindName(token.kind, true)}</td>
<td>${token.scopes.map((scope, index) => html`${index > 0 && ", "}<code>${scope}</code>`)}</td>
<td>${showInstant(token.created_at)}</td>
<td>${token.expires_at === null ? "Never" : showInstant(token.expires_at)}</td>
<td><form method="post" action="${actions.deleteToken(token.id)}">${hidden("csrf", csrfToken)}<button type="submit" class="secondary small">Delete<span class="visually-hidden"> ${name}, created ${
          showInstant(token.created_at)
        }</span></button></form></td>
</tr>
`
      })
    }</tbody>
</table>
</div>`

/** The signed-in user's tokens: issue one, see the one just issued, delete any, sign out. */
export const account = (input: Account): Page => {
  const { error } = input
  const values = input.values ?? {}
  const kind: TokenKindChoice = input.personalAccessTokensAllowed && values.kind === "personal_access_token"
    ? "personal_access_token"
    : "short_lived"
  const planNote = input.personalAccessTokensAllowed
    ? undefined
    : input.planMessage ?? "Your workspace's plan does not include personal access tokens."
  const chosen = new Set(values.scopes ?? [])
  return page(
    input.status ?? (error === undefined ? 200 : 400),
    layout({
      title: "Your tokens",
      wide: true,
      header: html`${signedInAs(input.userEmail)}
<form method="post" action="${actions.signOut}">${hidden("csrf", input.csrfToken)}<button type="submit" class="secondary small">Sign out</button></form>`,
      body: html`<h1>Your tokens</h1>
${input.issued !== undefined && issuedToken(input.issued)}
<section aria-labelledby="issue-heading">
<h2 id="issue-heading">Issue a token</h2>
${formMessage(error)}
<form method="post" action="${actions.issueToken}"${error?.field === "form" && html` aria-describedby="form-error"`}>
${hidden("csrf", input.csrfToken)}
<div class="field">
<label for="name">Name</label>
<input id="name" name="name" type="text" maxlength="200" required autocomplete="off" value="${values.name ?? ""}"${
        describe(error, "name", ["name-hint"])
      }>
<p id="name-hint" class="hint">What the token is for, to tell it apart in the list below.</p>
${fieldMessage(error, "name")}
</div>
<fieldset${describeGroup(error, "kind")}>
<legend>Kind</legend>
<div class="choice">
<input type="radio" id="kind-short-lived" name="kind" value="short_lived"${kind === "short_lived" && html` checked`}${
        describe(error, "kind")
      }>
<label for="kind-short-lived">Short-lived token <span class="muted">(1 to 6 hours; not the scopes marked “personal access tokens only”)</span></label>
</div>
<div class="choice">
<input type="radio" id="kind-personal" name="kind" value="personal_access_token"${
        kind === "personal_access_token" && html` checked`
      }${!input.personalAccessTokensAllowed && html` disabled`}${
        describe(error, "kind", planNote === undefined ? [] : ["plan-note"])
      }>
<label for="kind-personal">Personal access token <span class="muted">(30 days to a year; any scope you may grant)</span></label>
</div>
${planNote !== undefined && html`<p id="plan-note" class="hint">${planNote}</p>`}
${input.personalAccessTokensAllowed && input.planMessage !== undefined && html`<p class="hint">${input.planMessage}</p>`}
${fieldMessage(error, "kind")}
</fieldset>
${
        select({
          field: "expiry_hours",
          label: "A short-lived token expires after",
          choices: expiryHours,
          unit: "hour",
          selected: values.expiry_hours,
          disabled: false,
          error
        })
      }
${
        select({
          field: "expiry_days",
          label: "A personal access token expires after",
          choices: expiryDays,
          unit: "day",
          selected: values.expiry_days,
          disabled: !input.personalAccessTokensAllowed,
          error
        })
      }
<fieldset${describeGroup(error, "scopes")}>
<legend>Scopes</legend>
${
        input.scopeChoices.map((choice, index) =>
          html`<div class="choice">
<input type="checkbox" id="scope-${index}" name="scopes" value="${choice.scope}"${
            choice.allowed && chosen.has(choice.scope) && html` checked`
          }${!choice.allowed && html` disabled`}${describe(error, "scopes")}>
<label for="scope-${index}">${choice.description} <code>${choice.scope}</code>${
            choice.personalAccessTokenOnly === true && html` <span class="muted">(personal access tokens only)</span>`
          }${!choice.allowed && html` <span class="muted">(not available to you)</span>`}</label>
</div>
`
        )
      }${fieldMessage(error, "scopes")}
</fieldset>
<div class="actions"><button type="submit">Issue token</button></div>
</form>
</section>
<section aria-labelledby="tokens-heading">
<h2 id="tokens-heading">Live tokens</h2>
${tokenTable(input.tokens, input.csrfToken)}
</section>`
    })
  )
}
