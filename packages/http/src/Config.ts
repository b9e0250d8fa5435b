/** The host's configuration, read from the environment at the layer edge (decisions.md, "Host and operator interface"). */
import { NodeDnsResolver, NodeSecretBox, NodeSecretVault, SmtpMailer } from "@convene/node"
import { defaultPolicy, type Plan, type RateLimitPolicy } from "@convene/core"
import { Config, ConfigError, Either, Option, Redacted } from "effect"
import { listOf, parseTrustedProxies } from "./http/PartnerLimits.js"
import { isCanonical } from "./http/Routes.js"
import { telemetryConfig, type TelemetryConfig } from "./Telemetry.js"

/**
 * What one client may take of the server. The defaults suit a server behind a reverse proxy: the proxy closes
 * idle connections first (its idle timeouts are usually 60 s, the server's keep-alive 65 s), and a client that
 * trickles its headers or body is cut off long before Node's own five minutes.
 */
export interface ServerLimits {
  /** Time to receive a request's headers (408 request_timeout after it). */
  readonly headersTimeoutMs: number
  /** Time to receive a whole request, headers and body (408 request_timeout after it). */
  readonly requestTimeoutMs: number
  /** How long an idle keep-alive connection stays open. */
  readonly keepAliveTimeoutMs: number
  /** Connections served at once; further ones are closed as they arrive. */
  readonly maxConnections: number
  /** On SIGTERM or SIGINT, how long requests in flight may take to finish before they are answered 503. */
  readonly shutdownTimeoutMs: number
  /** Event streams (GET /v1/user/events) one credential may hold open at once in this process. */
  readonly streamsPerCredential: number
  /** How often the event log is read for the open event streams (changes made by any process sharing the store). */
  readonly eventPollMs: number
  /** How often an event stream carries a `: keep-alive` comment (decisions.md: 15 s). */
  readonly streamKeepAliveMs: number
  /** The largest file an upload may carry, in bytes (CONVENE_MAX_UPLOAD_BYTES; default 25 MiB; 413 past it). */
  readonly maxUploadBytes: number
  /**
   * Worker processes that prepare meeting context uploads (extraction, normalisation, PII scrubbing), so a large
   * upload's seconds of CPU do not hold up the requests the main thread serves (CONVENE_CONTEXT_WORKERS; default
   * 1; 0 prepares them on the main thread).
   */
  readonly contextWorkers: number
}

export const defaultLimits: ServerLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 65_000,
  maxConnections: 1024,
  shutdownTimeoutMs: 10_000,
  streamsPerCredential: 10,
  eventPollMs: 1_000,
  streamKeepAliveMs: 15_000,
  maxUploadBytes: 25 * 1024 * 1024,
  contextWorkers: 1
}

/** The identity room's settings: where the browser pages are, whether people sign in, the secret key. */
export interface IdentityConfig {
  /**
   * The origin (and path prefix) of the browser-facing pages: authorize, sign-in, consent and the account page
   * (CONVENE_AUTH_URL; default: the base URL). This server serves them; another origin is for a proxy in front.
   */
  readonly authUrl: string
  /** Browser sign-in (CONVENE_BROWSER_SIGNIN, default true); off, /signin does not exist and authorize answers 401. */
  readonly browserSignIn: boolean
  /**
   * The installation's secret key (CONVENE_SECRET_KEY: 32 bytes as hex or base64), which seals the private
   * signing keys in the store. None: a key file next to the data directory (Serve.ts), or, for a server built
   * in code without one, a random key for the life of the process.
   */
  readonly secretKey: Option.Option<Redacted.Redacted<string>>
}

/** The outbound room's settings: whom webhooks may reach, how creators are e-mailed. */
export interface OutboundConfig {
  /**
   * Hosts that webhooks may reach although they resolve to loopback or private addresses
   * (CONVENE_OUTBOUND_ALLOW_HOSTS, a comma list; default none).
   */
  readonly allowHosts: ReadonlyArray<string>
  /** The SMTP server that mails go through (CONVENE_SMTP_URL, smtp:// or smtps://); none: mails are only logged. */
  readonly smtpUrl: Option.Option<Redacted.Redacted<string>>
  /** The sender of those mails (CONVENE_MAIL_FROM; default `Convene <convene@localhost>`). */
  readonly mailFrom: Option.Option<string>
  /**
   * Certificate authorities (PEM) that calls out trust besides Node's own, for a server built in code whose receivers
   * use a private authority (a test's); a server process is given NODE_EXTRA_CA_CERTS instead. None by default.
   */
  readonly ca?: ReadonlyArray<string> | undefined
}

/** Domain verification's settings: which DNS servers the TXT lookups ask, how often the sweep runs. */
export interface DnsConfig {
  /** CONVENE_DNS_SERVERS: `ip` or `ip:port` entries (IPv6 as `[ip]:port`); empty: the system's resolver. */
  readonly servers: ReadonlyArray<string>
  /** How long one try of a lookup waits, in milliseconds (NodeDnsResolver's default when left out). */
  readonly timeoutMs?: number | undefined
  /** How many tries a lookup makes (NodeDnsResolver's default when left out). */
  readonly tries?: number | undefined
  /** How often the sweep expires challenges and re-validates verified domains, in milliseconds (default one minute). */
  readonly sweepIntervalMs?: number | undefined
}

/** The sweep's interval when the configuration leaves it out. */
export const defaultDomainSweepIntervalMs = 60_000

/** The MCP endpoint's settings (issue 15; mcp/McpRoutes.ts). */
export interface McpConfig {
  /** Whether the endpoint is served (CONVENE_MCP, default true); off, its paths and metadata answer 404. */
  readonly enabled: boolean
  /**
   * Its absolute URL (CONVENE_MCP_URL; default `{base_url}/mcp`): the resource that its protected-resource metadata
   * names, whose path this server serves whatever its origin (a proxy routes that host here).
   */
  readonly url: string
  /** How long a session may stay unused before it is closed, in milliseconds (default 30 minutes). */
  readonly idleTimeoutMs?: number | undefined
}

/** The MCP settings of a configuration, with the defaults of one that leaves them out. */
export const mcpOf = (config: HostConfig): McpConfig => config.mcp ?? { enabled: true, url: `${config.baseUrl}/mcp` }

/**
 * Checks CONVENE_MCP_URL: an absolute http or https URL without credentials, query or fragment, whose path is in the
 * one exact form the routes match (Routes.isCanonical). Answers the URL as written (a trailing slash on a bare
 * origin taken off).
 */
export const parseMcpUrl = (text: string): Either.Either<string, string> => {
  const problem = (why: string) =>
    Either.left(`CONVENE_MCP_URL: expected an absolute http or https URL such as https://convene.example.com/mcp, ${why}`)
  let url: URL
  try {
    url = new URL(text.trim())
  } catch {
    return problem(`not ${JSON.stringify(text.slice(0, 100))}`)
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return problem(`not a ${url.protocol} URL`)
  if (url.username !== "" || url.password !== "") return problem("without a user name or password")
  if (url.search !== "" || url.hash !== "" || text.includes("?") || text.includes("#")) {
    return problem("without a query or fragment")
  }
  if (url.pathname !== "/" && !isCanonical(url.pathname)) {
    return problem("whose path has no empty, \".\" or \"..\" segment, no trailing slash and no needless percent-encoding")
  }
  return Either.right(url.pathname === "/" ? url.origin : `${url.origin}${url.pathname}`)
}

export interface HostConfig {
  readonly port: number
  readonly host: string
  readonly baseUrl: string
  readonly operatorToken: Option.Option<Redacted.Redacted<string>>
  readonly accessLog: boolean
  /** Record spans (per request and per service call). Off unless asked for: no exporter is wired yet. */
  readonly tracing: boolean
  readonly limits: ServerLimits
  /** Metrics port and trace export (Telemetry.ts); none when left out. */
  readonly telemetry?: TelemetryConfig | undefined
  /** Sign-in and OAuth settings; left out: pages on the base URL, sign-in on, a per-process secret key. */
  readonly identity?: IdentityConfig | undefined
  /** Webhook and mail settings; left out: no private host allowed, mails logged. */
  readonly outbound?: OutboundConfig | undefined
  /**
   * Request budgets (CONVENE_RATE_LIMITS): left out, decisions.md's (FREE 60, PRO 300, ELITE 600, ENTERPRISE 1200
   * a minute per credential; 300 a minute per address without a credential) and partner-api.md's per client address
   * (`partner`: 1000, 500 and 100 requests per 5 minutes on /v1/partner/user, /v1/partner/admin and /oauth2, 30 a
   * minute on /v1/partner/sso/info); `"off"` counts nothing.
   */
  readonly rateLimits?: RateLimitPolicy | "off" | undefined
  /**
   * The proxies whose X-Forwarded-For is believed (CONVENE_TRUSTED_PROXIES): IP addresses and CIDR ranges, IPv4 or
   * IPv6. A request whose socket peer is one of them is counted against the client they forwarded it for
   * (http/PartnerLimits.ts); left out or empty, the socket's peer is the client.
   */
  readonly trustedProxies?: ReadonlyArray<string> | undefined
  /**
   * The keys that encrypt identity providers' client secrets (CONVENE_SECRETS_KEY: one key of 32 bytes in base64, or
   * a comma list of `kid:base64` whose first seals and all open; NodeSecretVault.parseKeys). None or left out: no IdP
   * configuration can be created (503 `secrets_key_not_configured`). Not CONVENE_SECRET_KEY (SecretBox), which seals
   * the server's own signing keys and webhook secrets.
   */
  readonly secretsKey?: Option.Option<Redacted.Redacted<string>> | undefined
  /** Domain verification's DNS settings; left out: the system's resolver, a sweep a minute. */
  readonly dns?: DnsConfig | undefined
  /** The MCP endpoint; left out: on, at `{base_url}/mcp`. */
  readonly mcp?: McpConfig | undefined
}

/** The budget names CONVENE_RATE_LIMITS takes. */
const budgetNames = ["FREE", "PRO", "ELITE", "ENTERPRISE", "ANONYMOUS"] as const

/**
 * Reads CONVENE_RATE_LIMITS: `off`, or a comma list of `NAME=requests-a-minute` for any of FREE, PRO, ELITE,
 * ENTERPRISE and ANONYMOUS (the others keep their defaults), e.g. `FREE=120,ANONYMOUS=600`.
 */
export const parseRateLimits = (text: string): Either.Either<RateLimitPolicy | "off", string> => {
  if (text.trim().toLowerCase() === "off") return Either.right("off")
  let policy = defaultPolicy
  for (const entry of text.split(",").map((part) => part.trim()).filter((part) => part.length > 0)) {
    const match = /^([A-Za-z]+)\s*=\s*(\d{1,9})$/.exec(entry)
    const name = match?.[1]?.toUpperCase()
    const budget = Number(match?.[2])
    if (match === null || !budgetNames.includes(name as typeof budgetNames[number]) || !(budget > 0)) {
      return Either.left(
        `CONVENE_RATE_LIMITS: expected "off" or a comma list of NAME=requests-a-minute with NAME one of ` +
          `${budgetNames.join(", ")} and a whole number from 1 to 999999999 (for example FREE=120,ANONYMOUS=600), not "${entry}"`
      )
    }
    policy = name === "ANONYMOUS"
      ? { ...policy, anonymous: budget }
      : { ...policy, perPlan: { ...policy.perPlan, [name as Plan]: budget } }
  }
  return Either.right(policy)
}

const rateLimits = Config.string("CONVENE_RATE_LIMITS").pipe(
  Config.mapOrFail((text) =>
    Either.mapLeft(parseRateLimits(text), (message) => ConfigError.InvalidData([], message))
  ),
  Config.withDefault<RateLimitPolicy | "off">(defaultPolicy)
)

/** CONVENE_TRUSTED_PROXIES: a comma list of IP addresses and CIDR ranges (none by default). */
const trustedProxies = Config.string("CONVENE_TRUSTED_PROXIES").pipe(
  Config.map(listOf),
  Config.mapOrFail((entries) =>
    Either.match(parseTrustedProxies(entries), {
      onLeft: (problem) => Either.left(ConfigError.InvalidData([], `CONVENE_TRUSTED_PROXIES: ${problem}`)),
      onRight: () => Either.right(entries)
    })
  ),
  Config.withDefault<ReadonlyArray<string>>([])
)

/** CONVENE_DNS_SERVERS: a comma list of `ip[:port]` (the system's resolver when unset or empty). */
const dnsServers = Config.string("CONVENE_DNS_SERVERS").pipe(
  Config.mapOrFail((text) =>
    Either.mapLeft(NodeDnsResolver.parseServers(text), (entry) =>
      ConfigError.InvalidData(
        [],
        `CONVENE_DNS_SERVERS: expected a comma list of IP addresses with an optional port (for example ` +
          `10.0.0.53,127.0.0.1:5353,[fd00::53]:53), not ${JSON.stringify(entry)}`
      ))
  ),
  Config.withDefault<ReadonlyArray<string>>([])
)

/** CONVENE_SECRETS_KEY, checked as NodeSecretVault reads it (the message names the variable, never the key). */
const secretsKey = Config.redacted("CONVENE_SECRETS_KEY").pipe(
  Config.mapOrFail((text) =>
    Either.match(NodeSecretVault.parseKeys(Redacted.value(text)), {
      onLeft: (problem) => Either.left(ConfigError.InvalidData([], problem)),
      onRight: () => Either.right(text)
    })
  ),
  Config.option
)

/** The outbound settings of a configuration, with the defaults of one that leaves them out. */
export const outboundOf = (config: HostConfig): OutboundConfig =>
  config.outbound ?? { allowHosts: [], smtpUrl: Option.none(), mailFrom: Option.none() }

/** The identity settings of a configuration, with the defaults of a configuration that leaves them out. */
export const identityOf = (config: HostConfig): IdentityConfig =>
  config.identity ?? { authUrl: config.baseUrl, browserSignIn: true, secretKey: Option.none() }

/** The shortest operator token accepted: it guards every workspace, so it must not be guessable. */
export const minOperatorTokenLength = 32

/**
 * CONVENE_OPERATOR_TOKEN: unset leaves the operator API off; set, it must be at least 32 characters (an
 * empty value is a mistake, not "off").
 */
const operatorToken = Config.redacted("CONVENE_OPERATOR_TOKEN").pipe(
  Config.validate({
    message: `CONVENE_OPERATOR_TOKEN is set but shorter than ${minOperatorTokenLength} characters; set a longer ` +
      "one (for example the output of `openssl rand -base64 32`) or unset it to turn the operator API off",
    validation: (token) => Redacted.value(token).length >= minOperatorTokenLength
  }),
  Config.option
)

const milliseconds = (name: string, fallback: number) =>
  Config.integer(name).pipe(
    Config.validate({ message: "must be a positive number of milliseconds", validation: (n) => n > 0 }),
    Config.withDefault(fallback)
  )

export const serverLimits: Config.Config<ServerLimits> = Config.all({
  headersTimeoutMs: milliseconds("CONVENE_HEADERS_TIMEOUT_MS", defaultLimits.headersTimeoutMs),
  requestTimeoutMs: milliseconds("CONVENE_REQUEST_TIMEOUT_MS", defaultLimits.requestTimeoutMs),
  keepAliveTimeoutMs: milliseconds("CONVENE_KEEP_ALIVE_TIMEOUT_MS", defaultLimits.keepAliveTimeoutMs),
  maxConnections: Config.integer("CONVENE_MAX_CONNECTIONS").pipe(
    Config.validate({ message: "must be a positive number", validation: (n) => n > 0 }),
    Config.withDefault(defaultLimits.maxConnections)
  ),
  shutdownTimeoutMs: milliseconds("CONVENE_SHUTDOWN_TIMEOUT_MS", defaultLimits.shutdownTimeoutMs),
  streamsPerCredential: Config.integer("CONVENE_STREAMS_PER_CREDENTIAL").pipe(
    Config.validate({ message: "must be a positive number", validation: (n) => n > 0 }),
    Config.withDefault(defaultLimits.streamsPerCredential)
  ),
  eventPollMs: milliseconds("CONVENE_EVENT_POLL_MS", defaultLimits.eventPollMs),
  streamKeepAliveMs: Config.succeed(defaultLimits.streamKeepAliveMs),
  maxUploadBytes: Config.integer("CONVENE_MAX_UPLOAD_BYTES").pipe(
    Config.validate({
      message: "must be a whole number of bytes from 1 to 2147483647 (2 GiB - 1)",
      validation: (n) => n >= 1 && n <= 2_147_483_647
    }),
    Config.withDefault(defaultLimits.maxUploadBytes)
  ),
  contextWorkers: Config.integer("CONVENE_CONTEXT_WORKERS").pipe(
    Config.validate({ message: "must be a whole number from 0 to 64", validation: (n) => n >= 0 && n <= 64 }),
    Config.withDefault(defaultLimits.contextWorkers)
  )
}).pipe(
  Config.validate({
    message: "CONVENE_HEADERS_TIMEOUT_MS must not be longer than CONVENE_REQUEST_TIMEOUT_MS",
    validation: (limits) => limits.headersTimeoutMs <= limits.requestTimeoutMs
  })
)

export const hostConfig: Config.Config<HostConfig> = Config.all({
  port: Config.port("PORT").pipe(Config.withDefault(8080)),
  host: Config.string("HOST").pipe(Config.withDefault("127.0.0.1")),
  baseUrl: Config.string("CONVENE_BASE_URL").pipe(Config.option),
  operatorToken,
  accessLog: Config.boolean("CONVENE_ACCESS_LOG").pipe(Config.withDefault(true)),
  tracing: Config.boolean("CONVENE_TRACING").pipe(Config.withDefault(false)),
  limits: serverLimits,
  telemetry: telemetryConfig,
  authUrl: Config.string("CONVENE_AUTH_URL").pipe(Config.option),
  browserSignIn: Config.boolean("CONVENE_BROWSER_SIGNIN").pipe(Config.withDefault(true)),
  secretKey: Config.redacted("CONVENE_SECRET_KEY").pipe(
    Config.validate({
      message: "CONVENE_SECRET_KEY: expected 32 random bytes as 64 hexadecimal characters or in base64 (for example the output of `openssl rand -hex 32`)",
      validation: (key) => Either.isRight(NodeSecretBox.parseKey(Redacted.value(key)))
    }),
    Config.option
  ),
  allowHosts: Config.string("CONVENE_OUTBOUND_ALLOW_HOSTS").pipe(
    Config.map((list) => list.split(",").map((host) => host.trim()).filter((host) => host.length > 0)),
    Config.withDefault([] as ReadonlyArray<string>)
  ),
  smtpUrl: Config.redacted("CONVENE_SMTP_URL").pipe(
    Config.validate({
      message: "CONVENE_SMTP_URL: expected smtp://user:password@host:port or smtps://user:password@host:port",
      validation: (url) => Either.isRight(SmtpMailer.parseUrl(Redacted.value(url)))
    }),
    Config.option
  ),
  mailFrom: Config.string("CONVENE_MAIL_FROM").pipe(Config.option),
  rateLimits,
  trustedProxies,
  secretsKey,
  dnsServers,
  mcp: Config.boolean("CONVENE_MCP").pipe(Config.withDefault(true)),
  mcpUrl: Config.string("CONVENE_MCP_URL").pipe(
    Config.mapOrFail((text) => Either.mapLeft(parseMcpUrl(text), (message) => ConfigError.InvalidData([], message))),
    Config.option
  )
}).pipe(
  Config.map(({ allowHosts, authUrl, baseUrl, browserSignIn, dnsServers, mailFrom, mcp, mcpUrl, secretKey, smtpUrl, ...rest }) => {
    const base = Option.getOrElse(baseUrl, () => `http://localhost:${rest.port}`).replace(/\/+$/, "")
    return {
      ...rest,
      baseUrl: base,
      identity: { authUrl: Option.getOrElse(authUrl, () => base).replace(/\/+$/, ""), browserSignIn, secretKey },
      outbound: { allowHosts, smtpUrl, mailFrom },
      dns: { servers: dnsServers },
      mcp: { enabled: mcp, url: Option.getOrElse(mcpUrl, () => `${base}/mcp`) }
    }
  })
)

/**
 * Where attachments' bytes are kept (CONVENE_BLOB_STORE): `database` (PostgreSQL rows, the default on a PostgreSQL
 * server, where several server processes share the database) or `filesystem` (files in `convene-blobs` under
 * CONVENE_DATA_DIR, the default of the embedded store). The memory store keeps them in memory, whatever this says.
 */
export type BlobStoreChoice = "database" | "filesystem"

/** Which store adapter runs: `memory` (CONVENE_STORE=memory), a PostgreSQL server (DATABASE_URL) or the embedded one. */
export type StoreChoice =
  | { readonly _tag: "memory" }
  | {
    readonly _tag: "server"
    readonly url: Redacted.Redacted<string>
    readonly poolSize: number
    /** Left out: `database`. With `filesystem`, in `convene-blobs` under `dataDir`. */
    readonly blobs?: BlobStoreChoice | undefined
    readonly dataDir?: string | undefined
  }
  | {
    readonly _tag: "embedded"
    readonly dataDir: string
    readonly blobs?: BlobStoreChoice | undefined
    /** Left out: `worker`. */
    readonly thread?: PgliteThread | undefined
  }

/**
 * Where the embedded PostgreSQL runs (CONVENE_PGLITE_THREAD): `worker`, a thread of its own, so that the event loop
 * parses requests and writes answers while a statement runs (the default); or `inline`, on the main thread.
 */
export type PgliteThread = "worker" | "inline"

export const storeChoice: Config.Config<StoreChoice> = Config.all({
  store: Config.literal("memory")("CONVENE_STORE").pipe(Config.option),
  url: Config.redacted("DATABASE_URL").pipe(Config.option),
  poolSize: Config.integer("CONVENE_DATABASE_POOL_SIZE").pipe(
    Config.validate({ message: "expected a whole number from 1 to 1000", validation: (size) => size >= 1 && size <= 1000 }),
    Config.withDefault(10)
  ),
  dataDir: Config.string("CONVENE_DATA_DIR").pipe(Config.withDefault("./.convene/data")),
  blobs: Config.literal("database", "filesystem")("CONVENE_BLOB_STORE").pipe(Config.option),
  thread: Config.literal("worker", "inline")("CONVENE_PGLITE_THREAD").pipe(Config.withDefault<PgliteThread>("worker"))
}).pipe(
  Config.map(({ blobs, dataDir, poolSize, store, thread, url }): StoreChoice =>
    Option.isSome(store)
      ? { _tag: "memory" }
      : Option.isSome(url)
      ? { _tag: "server", url: url.value, poolSize, ...(Option.isSome(blobs) ? { blobs: blobs.value, dataDir } : {}) }
      : { _tag: "embedded", dataDir, thread, ...(Option.isSome(blobs) ? { blobs: blobs.value } : {}) }
  )
)

/** Each problem of a configuration error on a line of its own: the variable and what is wrong with it. */
export const describeConfigError = (error: ConfigError.ConfigError): string => {
  const problems: Array<string> = []
  const walk = (error: ConfigError.ConfigError): void => {
    switch (error._op) {
      case "And":
      case "Or":
        walk(error.left)
        walk(error.right)
        return
      default: {
        const variable = error.path.join("_")
        problems.push(variable === "" || error.message.includes(variable) ? error.message : `${variable}: ${error.message}`)
      }
    }
  }
  walk(error)
  return [...new Set(problems)].join("; ")
}
