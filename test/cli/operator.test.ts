/**
 * `convene workspaces | users | tokens | api-keys` end to end: the compiled CLI against the compiled server (a
 * real process on a free port, in-memory store), as an operator's shell runs them. One server for the file;
 * commands that do not depend on each other run side by side.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { freePort, type ServerProcess, startServerProcess } from "../support/process.js"
import { client, OPERATOR_TOKEN } from "../support/server.js"
import { convene, type Run } from "./support.js"

let server: ServerProcess
/** Every output of the file, to check that the operator token never appears in one. */
const outputs: Array<Run> = []

const cli = async (args: ReadonlyArray<string>, options: { readonly env?: Record<string, string>; readonly input?: string } = {}) => {
  const run = await convene(args, { ...options, env: { CONVENE_URL: server.url, CONVENE_OPERATOR_TOKEN: OPERATOR_TOKEN, ...options.env } })
  outputs.push(run)
  return run
}

/** A command that must succeed; answers its standard output parsed as JSON. */
const json = async (args: ReadonlyArray<string>, input?: string) => {
  const run = await cli([...args, "--json"], input === undefined ? {} : { input })
  expect(run.stderr).toBe("")
  expect(run.code).toBe(0)
  return JSON.parse(run.stdout)
}

const operator = () => client(server.url, OPERATOR_TOKEN)

const requestId = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
const unknownId = "00000000-0000-4000-8000-000000000000"

beforeAll(async () => {
  server = await startServerProcess({ CONVENE_STORE: "memory" })
})

afterAll(async () => {
  await server?.stop()
  // Not in an answer, not in an error, not in help: the operator token is never printed.
  for (const run of outputs) expect(`${run.stdout}${run.stderr}`).not.toContain(OPERATOR_TOKEN)
})

describe("convene against a running server", () => {
  it("provisions a workspace, a user (password on stdin) and a token that works until it is revoked", async () => {
    const workspace = await json(["workspaces", "create", "--name", "Acme", "--plan", "PRO"])
    expect(workspace).toMatchObject({ name: "Acme", plan: "PRO" })

    const user = await json(
      ["users", "create", "--workspace", workspace.id, "--email", "Ann@Example.com", "--name", "Ann", "--role", "OWNER", "--password-stdin"],
      "a long passphrase\n"
    )
    expect(user).toEqual({ id: user.id, workspace_id: workspace.id, email: "ann@example.com", name: "Ann", role: "OWNER" })

    const issued = await json([
      "tokens", "issue", "--user", user.id, "--kind", "personal_access_token",
      "--scopes", "meetings:read,meetings:write", "--expiry-days", "30", "--name", "laptop"
    ])
    expect(issued).toMatchObject({ kind: "personal_access_token", name: "laptop", scopes: ["meetings:read", "meetings:write"] })
    expect(issued.token).toMatch(/^svc_pat_v1_/)

    const api = client(server.url, issued.token)
    expect((await api.post("/v1/meetings", { title: "From the CLI" })).status).toBe(201)
    expect((await api.get("/v1/meetings")).status).toBe(200)

    const [table, byWorkspace] = await Promise.all([
      cli(["tokens", "list", "--user", user.id]),
      json(["tokens", "list", "--workspace", workspace.id])
    ])
    expect(table.code).toBe(0)
    const [header, row, ...rest] = table.stdout.trimEnd().split("\n")
    expect(header).toMatch(/^ID +KIND +NAME +USER +SCOPES +EXPIRES +CREATED$/)
    expect(row).toMatch(new RegExp(`^${issued.id} +personal_access_token +laptop +${user.id} +meetings:read,meetings:write +\\d{4}-`))
    expect(rest).toEqual([])
    expect(table.stdout).not.toContain(issued.token)
    expect(byWorkspace).toMatchObject({ total: 1, items: [{ id: issued.id, user_id: user.id, kind: "personal_access_token" }] })

    const revoked = await cli(["tokens", "revoke", issued.id])
    expect(revoked).toMatchObject({ code: 0, stderr: "" })
    expect(revoked.stdout).toContain(`Revoked token ${issued.id}`)
    const refused = await api.get("/v1/meetings")
    expect(refused.status).toBe(401)
    expect(refused.body.code).toBe("invalid_token")
  }, 90_000)

  it("adds a first-party OAuth client that authorizes loopback redirects, and rotates the signing key", async () => {
    const created = await json(["oauth-clients", "create", "--name", "Desk app", "--redirect-uri", "http://127.0.0.1:7000/cb"])
    expect(created).toMatchObject({ name: "Desk app", redirect_uris: ["http://127.0.0.1:7000/cb"] })
    expect(created.client_id).toMatch(/^cvc_[A-Za-z0-9_-]{22}$/)
    // The authorization server knows the client and its redirect URI (on another port: loopback): an incomplete
    // request goes back to it with an error, where an unknown client gets the 400 page and no redirect.
    const authorize = (clientId: string) =>
      fetch(`${server.url}/v1/oauth/authorize?client_id=${clientId}&redirect_uri=${encodeURIComponent("http://127.0.0.1:7001/cb")}`, {
        redirect: "manual"
      })
    const known = await authorize(created.client_id)
    expect(known.status).toBe(302)
    expect(known.headers.get("location")).toMatch(/^http:\/\/127\.0\.0\.1:7001\/cb\?error=invalid_request&/)
    const unknown = await authorize("cvc_unknown")
    expect([unknown.status, unknown.headers.get("location")]).toEqual([400, null])
    const refused = await cli(["oauth-clients", "create", "--name", "Web", "--redirect-uri", "https://app.example.com/cb"])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("redirect_uris[0]: must be a loopback URI")

    const kids = async () =>
      ((await (await fetch(`${server.url}/v1/oauth/.well-known/jwks.json`)).json()) as { keys: Array<{ kid: string }> }).keys
        .map((key) => key.kid)
    const before = await kids()
    const rotated = await json(["signing-keys", "rotate"])
    // The new key is published beside the old one, which stays for the tokens it signed.
    expect(await kids()).toEqual([rotated.kid, ...before])
  })

  it("creates a partner app (its API key and client secret printed once), lists, changes it and connects a workspace", async () => {
    const created = await cli(["partner-apps", "create", "--name", "Acme Notes", "--redirect-uri", "https://acme.example/cb"])
    expect(created.code).toBe(0)
    expect(created.stderr).toContain("shown once")
    const key = /api_key\s+(svc_pak_v1_\S+)/.exec(created.stdout)?.[1]
    const clientId = /client_id\s+(cvp_\S+)/.exec(created.stdout)?.[1]
    const id = /^id\s+(\S+)/m.exec(created.stdout)?.[1]
    expect([key, clientId, id].every((value) => value !== undefined)).toBe(true)
    expect(created.stdout).toMatch(/client_secret\s+svc_pcs_v1_/)
    const webhookSecret = /webhook_secret\s+(whsec_\S+)/.exec(created.stdout)?.[1]
    expect(webhookSecret).toBeDefined()
    expect(created.stdout).toMatch(/slug\s+acme-notes/)

    const shown = await json(["partner-apps", "get", id!])
    expect(shown).toMatchObject({ id, name: "Acme Notes", status: "active", client_id: clientId, redirect_uris: ["https://acme.example/cb"] })
    expect(JSON.stringify(shown)).not.toContain(key!)
    expect(JSON.stringify(shown)).not.toContain(webhookSecret!)

    // A new webhook secret, printed once (on standard output, the note on standard error); --json answers it too.
    const rotated = await cli(["partner-apps", "rotate-webhook-secret", id!])
    expect(rotated.code).toBe(0)
    expect(rotated.stderr).toContain("shown once")
    const renewed = /webhook_secret\s+(whsec_\S+)/.exec(rotated.stdout)?.[1]
    expect(renewed).toBeDefined()
    expect(renewed).not.toBe(webhookSecret)
    const again = await json(["partner-apps", "rotate-webhook-secret", id!])
    expect(again).toMatchObject({ id, webhook_enabled: false })
    expect(again.webhook_secret).toMatch(/^whsec_/)
    expect(again.webhook_secret).not.toBe(renewed)
    expect(JSON.stringify(await json(["partner-apps", "get", id!]))).not.toContain(again.webhook_secret)
    const listed = await cli(["partner-apps", "list"])
    expect(listed.stdout).toContain(clientId!)
    expect(listed.stdout).not.toContain(key!)

    const workspace = await json(["workspaces", "create", "--name", "Connected", "--plan", "ELITE"])
    const connected = await json(["partner-apps", "connect", id!, "--workspace", workspace.id])
    expect(connected).toMatchObject({ id: workspace.id, name: "Connected", plan: "ELITE" })
    const admin = await client(server.url).get("/v1/partner/admin/workspaces", { "x-api-key": key!, "x-client-id": clientId! })
    expect(admin.body.items.map((item: { id: string }) => item.id)).toEqual([workspace.id])

    const suspended = await json(["partner-apps", "update", id!, "--status", "suspended", "--co-brand-name", "Acme"])
    expect(suspended).toMatchObject({ status: "suspended", co_brand_name: "Acme" })
    expect((await client(server.url).get("/v1/partner/admin/app", { "x-api-key": key!, "x-client-id": clientId! })).status).toBe(403)
    const cleared = await json(["partner-apps", "update", id!, "--co-brand-name", "none", "--status", "active"])
    expect(cleared).toMatchObject({ status: "active", co_brand_name: null })

    const nothing = await cli(["partner-apps", "update", id!])
    expect(nothing.code).toBe(2)
    const refused = await cli(["partner-apps", "create", "--name", "Web", "--webhook-url", "http://hooks.example.com/x"])
    expect(refused.code).toBe(1)
    expect(refused.stderr).toContain("webhook_url")
  }, 90_000)

  it("--json prints the API's answer exactly; tables show the columns for people", async () => {
    const workspace = (await operator().post("/operator/v1/workspaces", { name: "Tables", plan: "ENTERPRISE" })).body
    const [list, users, keyRun] = await Promise.all([
      cli(["workspaces", "list", "--limit", "100"]),
      cli(["users", "create", "--workspace", workspace.id, "--email", "bo@example.com", "--name", "Bo", "--role", "MEMBER"]),
      cli(["api-keys", "create", "--workspace", workspace.id, "--name", "ci"])
    ])
    expect(list.code).toBe(0)
    const lines = list.stdout.trimEnd().split("\n")
    expect(lines[0]).toMatch(/^ID +NAME +PLAN +USERS +MEETINGS +TOKENS +API KEYS +CREATED$/)
    expect(lines.find((line) => line.startsWith(workspace.id))).toMatch(/^\S+ +Tables +ENTERPRISE +[01] +0 +0 +[01] +\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/)
    // The columns line up: every row starts each column where the header does.
    const at = lines[0]!.indexOf("PLAN")
    for (const line of lines.slice(1)) expect(line.slice(at - 2, at)).toBe("  ")

    expect(users.code).toBe(0)
    expect(users.stdout).toMatch(/^id +[0-9a-f-]{36}\nworkspace_id +\S+\nemail +bo@example\.com\nname +Bo\nrole +MEMBER\n$/)

    // The key is printed once, with a note on standard error; listed afterwards without it.
    expect(keyRun.code).toBe(0)
    const key = /^key +(svc_wk_v1_\S+)$/m.exec(keyRun.stdout)?.[1]
    expect(key).toBeDefined()
    expect(keyRun.stderr).toBe("The API key is shown once: store it now, it cannot be read again.\n")

    const [keys, get] = await Promise.all([
      cli(["api-keys", "list", "--workspace", workspace.id]),
      cli(["workspaces", "get", workspace.id, "--json"])
    ])
    expect(keys.stdout).toMatch(/^ID +NAME +EXPIRES +CREATED\n[0-9a-f-]{36} +ci +never +\d{4}-/)
    expect(keys.stdout).not.toContain(key!)
    expect((await client(server.url, key!).get("/v1/meetings")).status).toBe(200)
    // Byte for byte what the API answers (nothing changed the workspace since).
    const direct = await operator().get(`/operator/v1/workspaces/${workspace.id}`)
    expect(get.stdout).toBe(`${direct.text}\n`)
    expect(JSON.parse(get.stdout)).toMatchObject({ id: workspace.id, counts: { users: 1, meetings: 0, tokens: 0, api_keys: 1 } })
  }, 90_000)

  it("finds a user by e-mail, changes and deletes users and workspaces", async () => {
    const workspace = (await operator().post("/operator/v1/workspaces", { name: "Doomed", plan: "PRO" })).body
    const addUser = async (email: string) =>
      (await operator().post(`/operator/v1/workspaces/${workspace.id}/users`, { email, name: "Cy", role: "ADMIN" })).body
    const [user, leaving] = await Promise.all([addUser("cy@example.com"), addUser("dee@example.com")])

    const [found, missing, missingJson, updated, renamed, unconfirmed, userDeleted] = await Promise.all([
      cli(["users", "find", "--email", "  CY@example.com "]),
      cli(["users", "find", "--email", "nobody@example.com"]),
      cli(["users", "find", "--email", "nobody@example.com", "--json"]),
      cli(["users", "update", user.id, "--role", "MEMBER", "--name", "Cyrus", "--password-stdin", "--json"], { input: "another passphrase\n" }),
      cli(["workspaces", "update", workspace.id, "--plan", "ELITE", "--json"]),
      cli(["workspaces", "delete", workspace.id]),
      cli(["users", "delete", leaving.id, "--yes"])
    ])
    expect(found.code).toBe(0)
    expect(found.stdout).toMatch(new RegExp(`^id +${user.id}$`, "m"))
    expect(missing).toMatchObject({ code: 1, stdout: "", stderr: "error: no user has the address nobody@example.com\n" })
    expect(missingJson.code).toBe(1)
    expect(JSON.parse(missingJson.stdout)).toEqual({ items: [], total: 0, limit: 20, offset: 0 })
    expect(updated.code).toBe(0)
    expect(JSON.parse(updated.stdout)).toMatchObject({ id: user.id, name: "Cyrus", role: "MEMBER" })
    expect(renamed.code).toBe(0)
    expect(JSON.parse(renamed.stdout)).toMatchObject({ id: workspace.id, name: "Doomed", plan: "ELITE" })
    // Deleting needs --yes when there is no terminal to ask on.
    expect(unconfirmed).toMatchObject({
      code: 2,
      stderr: "error: this cannot be undone: add --yes to go ahead (no terminal to ask on)\n"
    })
    expect(userDeleted).toMatchObject({ code: 0, stdout: `Deleted user ${leaving.id}.\n` })
    expect((await operator().get(`/operator/v1/users/${leaving.id}`)).status).toBe(404)

    const deleted = await cli(["workspaces", "delete", workspace.id, "--yes", "--json"])
    expect(deleted).toMatchObject({ code: 0, stdout: "", stderr: "" })
    expect((await operator().get(`/operator/v1/workspaces/${workspace.id}`)).status).toBe(404)
    expect((await operator().get(`/operator/v1/users/${user.id}`)).status).toBe(404)
  }, 90_000)

  it("exits 1 with the server's envelope, 2 on usage errors, 3 when the server cannot be reached", async () => {
    const closed = await freePort()
    const [wrongToken, unknown, down, badFlag, badChoice, noToken, badId, shortPassword, badScope, nothingToChange, help, nounHelp, version] =
      await Promise.all([
        cli(["workspaces", "list"], { env: { CONVENE_OPERATOR_TOKEN: "x".repeat(40) } }),
        cli(["users", "get", unknownId]),
        cli(["workspaces", "list"], { env: { CONVENE_URL: `http://127.0.0.1:${closed}` } }),
        cli(["workspaces", "list", "--bogus"]),
        cli(["workspaces", "create", "--name", "Acme", "--plan", "GOLD"]),
        convene(["workspaces", "list"], { env: { CONVENE_URL: server.url } }),
        cli(["workspaces", "get", "not-a-uuid"]),
        cli(["users", "create", "--workspace", unknownId, "--email", "d@example.com", "--name", "D", "--role", "MEMBER", "--password-stdin"], {
          input: "short\n"
        }),
        cli(["tokens", "issue", "--user", unknownId, "--kind", "short_lived", "--scopes", "meetings:read,meetings:fly"]),
        cli(["workspaces", "update", unknownId]),
        cli(["--help"]),
        cli(["tokens", "--help"]),
        cli(["--version"])
      ])

    expect(wrongToken.code).toBe(1)
    expect(wrongToken.stdout).toBe("")
    expect(wrongToken.stderr).toMatch(new RegExp(`^error: .+ \\(invalid_token, request ${requestId}\\)\\n$`))

    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toMatch(new RegExp(`^error: user ${unknownId} was not found \\(not_found, request ${requestId}\\)\\n$`))

    expect(down).toMatchObject({ code: 3, stdout: "", stderr: `error: cannot reach Convene at http://127.0.0.1:${closed}: connection refused\n` })

    expect(badFlag.code).toBe(2)
    expect(badFlag.stderr).toContain("--bogus")
    expect(badChoice.code).toBe(2)
    expect(badChoice.stderr).toContain("FREE, PRO, ELITE, ENTERPRISE")

    expect(noToken.code).toBe(2)
    expect(noToken.stderr).toBe(
      "error: CONVENE_OPERATOR_TOKEN is not set: export the operator token the server was started with " +
        "(export CONVENE_OPERATOR_TOKEN=...); the operator commands talk to /operator/v1 with it\n"
    )
    expect(badId).toMatchObject({ code: 2, stderr: `error: <id>: expected an id (a UUID), got "not-a-uuid"\n` })
    expect(shortPassword).toMatchObject({ code: 2, stderr: "error: --password: must be at least 8 characters\n" })
    expect(badScope.code).toBe(2)
    expect(badScope.stderr).toContain(`unknown scope "meetings:fly"; the scopes are meetings:read, meetings:write`)
    expect(nothingToChange).toMatchObject({ code: 2, stderr: "error: nothing to change: give --name, --plan or both\n" })

    // No stack trace for any expected failure.
    for (const run of [wrongToken, unknown, down, noToken, badId, shortPassword, badScope]) expect(run.stderr).not.toMatch(/\n\s+at /)

    expect(help.code).toBe(0)
    for (const noun of ["serve", "migrate", "workspaces", "users", "tokens", "api-keys"]) expect(help.stdout).toContain(`- ${noun}`)
    expect(nounHelp.code).toBe(0)
    expect(nounHelp.stdout).toContain("- issue")
    expect(nounHelp.stdout).toContain("--scopes")
    expect(version.code).toBe(0)
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/)
  }, 90_000)
})
