// The partner user context against the first-party API on the same server (issue 12): one server per store in
// the default configuration but for the request budgets (CONVENE_RATE_LIMITS=off, which also lifts the partner
// API's per-address budgets: a load generator on one address would otherwise measure 429s), a partner access token
// obtained through the real OAuth flow (sign-in, consent, /oauth2/token with HTTP Basic), then autocannon on
//   GET /v1/meetings/{id}/agenda-items?limit=20 (first-party, personal access token)
//   GET /v1/partner/user/meetings/{id}/agenda-items?limit=20 (partner access token)
//   POST /oauth2/token grant_type=refresh_token (one connection: each refresh rotates the token it presents)
//   GET /v1/partner/sso/info/{slug} (public) and GET /v1/partner/admin/idp/domains/{domain} (API key) of issue 13
//   POST /v1/partner/user/workflow-runs (a run entering its first step, a task: run, task and the events' writes in one
//   transaction) and GET /v1/partner/user/workflow-runs/{id} of issue 14, the app with a webhook URL on a closed port
//   of 127.0.0.1 (CONVENE_OUTBOUND_ALLOW_HOSTS): the events are enqueued and the worker's attempts fail at once
// Prints one JSON line per run. `pnpm bench:partner` (BENCH_STORES=memory,pglite, BENCH_SECONDS=10, BENCH_RUNS=3).
import autocannon from "autocannon"
import { randomUUID } from "node:crypto"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { caller, provision, sleep, startBenchServer } from "./support.mjs"

const env = process.env
const stores = (env.BENCH_STORES ?? "memory,pglite").split(",")
const seconds = Number(env.BENCH_SECONDS ?? 10)
const runs = Number(env.BENCH_RUNS ?? 3)
const connections = Number(env.BENCH_CONNECTIONS ?? 50)
const OPERATOR = randomUUID()
const PASSWORD = "correct horse battery"


/** Cookies of one site, as a browser keeps them. */
const jar = () => {
  const cookies = new Map()
  return {
    absorb: (response) => {
      for (const line of response.headers.getSetCookie()) {
        const [pair] = line.split(";")
        const index = pair.indexOf("=")
        cookies.set(pair.slice(0, index).trim(), pair.slice(index + 1).trim())
      }
    },
    header: () => [...cookies].map(([name, value]) => `${name}=${value}`).join("; ")
  }
}

const hidden = (page, name) => new RegExp(`<input type="hidden" name="${name}" value="([^"]*)">`).exec(page)[1].replaceAll("&amp;", "&")

/** A partner access and refresh token of the user, through sign-in, consent and the token endpoint. */
const partnerTokens = async (url, email, app, redirectUri) => {
  const cookies = jar()
  const browse = async (path, form) => {
    const response = await fetch(url + path, {
      method: form === undefined ? "GET" : "POST",
      redirect: "manual",
      headers: {
        accept: "text/html",
        cookie: cookies.header(),
        ...(form === undefined ? {} : { "content-type": "application/x-www-form-urlencoded", origin: url })
      },
      ...(form === undefined ? {} : { body: new URLSearchParams(form).toString() })
    })
    cookies.absorb(response)
    return { status: response.status, location: response.headers.get("location"), text: await response.text() }
  }
  const authorize = `/oauth2/authorize?${new URLSearchParams({
    response_type: "code",
    client_id: app.client_id,
    redirect_uri: redirectUri,
    scope: "meetings:read meetings:write partner-api/workflows:read partner-api/workflows:write",
    state: "bench"
  })}`
  const signIn = await browse(`/signin?continue=${encodeURIComponent(authorize)}`)
  await browse("/signin", { csrf: hidden(signIn.text, "csrf"), continue: authorize, email, password: PASSWORD })
  const consent = await browse(authorize)
  const back = await browse("/oauth2/authorize", { csrf: hidden(consent.text, "csrf"), request: hidden(consent.text, "request"), decision: "approve" })
  const code = new URL(back.location).searchParams.get("code")
  const response = await fetch(`${url}/oauth2/token`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${btoa(`${app.client_id}:${app.client_secret}`)}` },
    body: new URLSearchParams({ grant_type: "authorization_code", code, redirect_uri: redirectUri })
  })
  return await response.json()
}

const measure = (options) =>
  autocannon({ connections, pipelining: 1, duration: seconds, ...options }).then((result) => ({
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts
  }))

for (const store of stores) {
  const dir = mkdtempSync(join(tmpdir(), "convene-bench-partner-"))
  const server = await startBenchServer(OPERATOR, { CONVENE_OUTBOUND_ALLOW_HOSTS: "127.0.0.1", ...(store === "memory" ? { CONVENE_STORE: "memory" } : { CONVENE_DATA_DIR: dir }) })
  try {
    const call = caller(server.url)
    const { token, userId } = await provision(call, OPERATOR, ["meetings:read", "meetings:write"])
    const { email } = await call("GET", `/operator/v1/users/${userId}`, OPERATOR)
    const meeting = await call("POST", "/v1/meetings", token, { title: "Bench" })
    for (let i = 0; i < 20; i++) await call("POST", "/v1/agenda-items", token, { meeting_id: meeting.id, title: `Item ${i}` })
    const redirectUri = "http://127.0.0.1:9/callback"
    const app = await call("POST", "/operator/v1/partner-apps", OPERATOR, {
      name: "Bench partner",
      redirect_uris: [redirectUri],
      webhook_url: "https://127.0.0.1:9/convene"
    })
    const admin = { "x-api-key": app.api_key, "x-client-id": app.client_id }
    // A toolkit with a workflow template, installed in the workspace by the consent below.
    const toolkit = await call("POST", "/v1/partner/admin/toolkits", undefined, {
      manifest: {
        schema_version: 1,
        name: "Bench kit",
        workflow_templates: [{ key: "review", name: "Review", roles: ["lead"], steps: [{ key: "check", type: "task", title: "Check", role: "lead" }] }]
      }
    }, admin)
    await call("PATCH", `/v1/partner/admin/toolkits/${toolkit.id}`, undefined, { auto_install_on_new_workspaces: true }, admin)
    await call("POST", `/v1/partner/admin/toolkits/${toolkit.id}/versions/${toolkit.latest_version_id}/publish`, undefined, {}, admin)
    const tokens = await partnerTokens(server.url, email, app, redirectUri)
    let template
    for (let i = 0; template === undefined && i < 200; i++) {
      const installations = await call("GET", `/v1/partner/admin/toolkits/${toolkit.id}/installations`, undefined, undefined, admin)
      if (installations.summary.installed === 1) template = (await call("GET", "/v1/partner/admin/workflow-templates", undefined, undefined, admin)).items[0]
      else await sleep(50)
    }
    if (template === undefined) throw new Error("the toolkit was not installed")
    const runBody = JSON.stringify({ template_id: template.id, role_mappings: { lead: userId } })
    const partnerAuth = { authorization: `Bearer ${tokens.access_token}` }
    const run = await call("POST", "/v1/partner/user/workflow-runs", tokens.access_token, JSON.parse(runBody))
    const domain = "bench.example.com"
    const verified = await fetch(`${server.url}/v1/partner/admin/idp/domains/${domain}/verify`, {
      method: "POST",
      headers: { "x-api-key": app.api_key, "x-client-id": app.client_id }
    })
    if (verified.status !== 201) throw new Error(`verify answered ${verified.status}`)
    const scenarios = {
      "first-party agenda": { url: `${server.url}/v1/agenda-items?meeting_id=${meeting.id}&limit=20`, headers: { authorization: `Bearer ${token}` } },
      "partner agenda": {
        url: `${server.url}/v1/partner/user/meetings/${meeting.id}/agenda-items?limit=20`,
        headers: { authorization: `Bearer ${tokens.access_token}` }
      },
      // Public: what a sign-in page shows of the app (issue 13).
      "sso info": { url: `${server.url}/v1/partner/sso/info/${app.slug}` },
      // Admin context (X-API-Key compared against its hash): a domain's verification record (issue 13).
      "domain status": {
        url: `${server.url}/v1/partner/admin/idp/domains/${domain}`,
        headers: { "x-api-key": app.api_key, "x-client-id": app.client_id }
      },
      // User context (issue 14): a run read with its steps, and runs started.
      "workflow run get": { url: `${server.url}/v1/partner/user/workflow-runs/${run.id}`, headers: partnerAuth },
      "workflow run create": {
        url: `${server.url}/v1/partner/user/workflow-runs`,
        method: "POST",
        headers: { ...partnerAuth, "content-type": "application/json" },
        body: runBody
      }
    }
    for (const [name, options] of Object.entries(scenarios)) {
      await measure({ ...options, duration: 2 })
      for (let run = 0; run < runs; run++) console.log(JSON.stringify({ store, scenario: name, run, ...(await measure(options)) }))
    }
    // Refreshes one after another: each rotates the refresh token it presents.
    let refresh = tokens.refresh_token
    const basic = `Basic ${btoa(`${app.client_id}:${app.client_secret}`)}`
    const started = performance.now()
    let count = 0
    while (performance.now() - started < seconds * 1000) {
      const response = await fetch(`${server.url}/oauth2/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", authorization: basic },
        body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: refresh })
      })
      if (response.status !== 200) throw new Error(`refresh answered ${response.status}`)
      refresh = (await response.json()).refresh_token
      count++
    }
    console.log(JSON.stringify({ store, scenario: "refresh (sequential)", perSecond: Math.round(count / seconds), meanMs: +((seconds * 1000) / count).toFixed(2) }))
  } finally {
    await server.stop()
    rmSync(dir, { recursive: true, force: true })
  }
}
