/**
 * The packages as npm users get them. Every package under packages/ is built and packed (`pnpm -r pack`, which
 * turns `workspace:` ranges into versions), and an empty directory outside the repository installs the tarballs
 * with npm, third-party dependencies and peers coming from the registry. There:
 * - the tarballs hold what a published package needs (dist with its types, README.md, LICENSE, no build state);
 * - a plain .mjs program embeds the core on the in-memory store;
 * - `npx convene serve` answers /readyz and the operator API, a plain .mjs program uses @convene/client against
 *   it, and the server exits 0 on SIGTERM;
 * - the README's embedding snippet and a consumer using every package type-check with tsc under `nodenext` and
 *   `bundler` resolution, their types coming from the packages' dist/*.d.ts (never from src/);
 * - @convene/client installs alone (with @convene/api and @convene/core, none of the server's dependencies) and
 *   bundles for browsers: no node:* module in its graph.
 * Needs the npm registry. About two minutes with a warm npm cache, most of it npm writing some 46 000 files (the
 * server's dependencies: @scalar/api-reference's UI, PGlite, OpenTelemetry).
 */
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { once } from "node:events"
import { createServer } from "node:net"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { build } from "esbuild"
import { afterAll, beforeAll, describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../..", import.meta.url))
const tsc = Path.join(root, "node_modules", "typescript", "bin", "tsc")
const OPERATOR_TOKEN = "packaging-test-operator-token-0123456789"

/** The environment of a shell outside the repository: without what pnpm sets for the script running this test. */
const env = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([key]) =>
      !/^(npm_package_|npm_lifecycle_|npm_config_user_agent$|npm_execpath$|npm_node_execpath$|PNPM_|VITEST|NODE_OPTIONS$)/.test(key)
    )
  )
  return { ...clean, ...extra }
}

/** Runs a command to its end; fails with its whole output when it exits non-zero. */
const run = (command: string, args: ReadonlyArray<string>, options: { readonly cwd: string; readonly env?: NodeJS.ProcessEnv }) =>
  new Promise<{ readonly stdout: string; readonly stderr: string }>((resolve, reject) => {
    execFile(command, args, { cwd: options.cwd, env: options.env ?? env(), maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(" ")} failed (${error.code}):\n${stdout}\n${stderr}`))
      else resolve({ stdout, stderr })
    })
  })

const packageDirs = Fs.readdirSync(Path.join(root, "packages"))
  .map((name) => Path.join(root, "packages", name))
  .filter((dir) => Fs.existsSync(Path.join(dir, "package.json")))

let work: string
let consumer: string
let tarballs: ReadonlyArray<string> = []

beforeAll(async () => {
  work = Fs.mkdtempSync(Path.join(Os.tmpdir(), "convene-packaging-"))
  consumer = Path.join(work, "consumer")
  const packed = Path.join(work, "tarballs")
  Fs.mkdirSync(consumer)
  Fs.mkdirSync(packed)
  // Up to date after `pnpm install` (its `prepare` builds), so usually a no-op; the packages' dist, not src, is packed.
  await run(process.execPath, [tsc, "-b", ...packageDirs.filter((dir) => Fs.existsSync(Path.join(dir, "tsconfig.json")))], { cwd: root })
  await run("pnpm", ["-r", "--filter", "./packages/*", "pack", "--pack-destination", packed], { cwd: root })
  tarballs = Fs.readdirSync(packed).filter((file) => file.endsWith(".tgz")).map((file) => Path.join(packed, file))
  Fs.writeFileSync(Path.join(consumer, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }, null, 2))
  await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error", ...tarballs], { cwd: consumer })
}, 300_000)

// The install is tens of thousands of files: removed in the background, so that the test does not wait on the disk.
afterAll(() => {
  if (work !== undefined) spawn("rm", ["-rf", work], { detached: true, stdio: "ignore" }).unref()
})

/** The package.json inside a tarball, and the tarball's file list. */
const inspect = async (tarball: string) => {
  const list = (await run("tar", ["-tzf", tarball], { cwd: work })).stdout.split("\n").filter((line) => line.length > 0)
  const manifest = JSON.parse((await run("tar", ["-xzOf", tarball, "package/package.json"], { cwd: work })).stdout)
  return { list, manifest }
}

describe("the packed packages", () => {
  it("packs every package under packages/", () => {
    expect(tarballs.map((tarball) => Path.basename(tarball)).sort()).toEqual(
      packageDirs.map((dir) => `convene-${Path.basename(dir)}-0.1.0.tgz`).sort()
    )
  })

  it("hold what a published package needs, and nothing of the build", async () => {
    const license = Fs.readFileSync(Path.join(root, "LICENSE"), "utf8")
    const problems: Array<string> = []
    for (const tarball of tarballs) {
      const { list, manifest } = await inspect(tarball)
      const name = manifest.name as string
      const problem = (text: string) => problems.push(`${name}: ${text}`)
      if (manifest.private !== undefined) problem("is private")
      if (JSON.stringify(manifest).includes("workspace:")) problem("keeps a workspace: range")
      if (typeof manifest.description !== "string") problem("has no description")
      if (manifest.license !== "Apache-2.0") problem(`license is ${manifest.license}`)
      if (manifest.type !== "module") problem("is not type: module")
      if (manifest.engines?.node !== ">=20.11") problem(`engines.node is ${manifest.engines?.node}`)
      if (manifest.repository?.url !== "git+https://github.com/convene/convene.git") problem("has no repository url")
      if (manifest.repository?.directory !== `packages/${name.replace("@convene/", "")}`) problem("has no repository directory")
      if (manifest.publishConfig?.access !== "public") problem("has no publishConfig.access public")
      // pnpm packs the repository's LICENSE into a package that has none of its own.
      for (const file of ["package/LICENSE", "package/README.md", "package/dist/index.js", "package/dist/index.d.ts"]) {
        if (!list.includes(file)) problem(`does not pack ${file}`)
      }
      if (list.includes("package/LICENSE") && (await run("tar", ["-xzOf", tarball, "package/LICENSE"], { cwd: work })).stdout !== license) {
        problem("packs another LICENSE")
      }
      for (const file of list.filter((file) => file.includes("tsbuildinfo"))) problem(`packs ${file}`)
      // Every target of `exports` and `bin` is a packed file (the source condition's src/ is packed too).
      const targets = [
        ...Object.values((manifest.exports ?? {}) as Record<string, string | Record<string, string>>)
          .flatMap((entry) => (typeof entry === "string" ? [entry] : Object.values(entry))),
        ...Object.values((manifest.bin ?? {}) as Record<string, string>)
      ].filter((target) => !target.includes("*"))
      for (const target of targets) {
        if (!list.includes(`package/${target.replace(/^\.\//, "")}`)) problem(`does not pack ${target}`)
      }
    }
    expect(problems).toEqual([])
  })
})

describe.concurrent("installed from the tarballs, outside the repository", () => {
  it("a plain .mjs program embeds the core on the in-memory store", async () => {
    Fs.writeFileSync(
      Path.join(consumer, "embed.mjs"),
      `import { Authentication, Convene, CreateMeeting, CreateUser, CreateWorkspace, Email, IssueToken, Meetings, Tokens, Users, Workspaces } from "@convene/core"
import { NodeCrypto } from "@convene/node"
import * as StoreMemory from "@convene/store-memory"
import { Effect, Layer, Redacted } from "effect"

const CoreLive = Convene.layer.pipe(Layer.provide(Layer.merge(StoreMemory.layer, NodeCrypto.layer)))

const program = Effect.gen(function*() {
  const workspace = yield* (yield* Workspaces).create(CreateWorkspace.make({ name: "Embedded", plan: "PRO" }))
  const user = yield* (yield* Users).create(workspace.id, CreateUser.make({ email: Email.make("lead@example.com"), name: "Lead", role: "OWNER" }))
  const issued = yield* (yield* Tokens).issue(user.id, IssueToken.make({ kind: "short_lived", scopes: ["meetings:read", "meetings:write"], expiry_hours: 1 }))
  const principal = yield* (yield* Authentication).authenticate(Redacted.make(issued.token))
  const meetings = yield* Meetings
  const meeting = yield* meetings.create(principal, CreateMeeting.make({ title: "Planning", is_instant: true }))
  const listed = yield* meetings.list(principal, {}, {})
  return { workspace: workspace.name, meeting: meeting.title, status: meeting.status, listed: listed.items.map((m) => m.title) }
})

console.log(JSON.stringify(await Effect.runPromise(program.pipe(Effect.provide(CoreLive)))))
`
    )
    const { stdout } = await run(process.execPath, ["embed.mjs"], { cwd: consumer })
    expect(JSON.parse(stdout)).toEqual({ workspace: "Embedded", meeting: "Planning", status: "in_progress", listed: ["Planning"] })
  }, 60_000)

  it("`npx convene serve` serves; a plain .mjs program uses @convene/client against it; SIGTERM exits 0", async () => {
    const port = await freePort()
    const url = `http://127.0.0.1:${port}`
    // Its own process group, so that nothing outlives the test whatever happens (the `finally` below).
    const child = spawn("npx", ["--no", "convene", "serve"], {
      cwd: consumer,
      detached: true,
      env: env({ PORT: String(port), HOST: "127.0.0.1", CONVENE_STORE: "memory", CONVENE_OPERATOR_TOKEN: OPERATOR_TOKEN, CONVENE_LOG_FORMAT: "json" }),
      stdio: ["ignore", "pipe", "pipe"]
    })
    let output = ""
    child.stdout!.on("data", (chunk) => (output += chunk))
    child.stderr!.on("data", (chunk) => (output += chunk))
    const exited = once(child, "exit")
    try {
      await ready(child, url, () => output)
      const workspaces = await fetch(`${url}/operator/v1/workspaces`, { headers: { authorization: `Bearer ${OPERATOR_TOKEN}` } })
      expect(workspaces.status).toBe(200)
      expect(await workspaces.json()).toMatchObject({ items: [], total: 0 })

      Fs.writeFileSync(
        Path.join(consumer, "client.mjs"),
        `import { makeClient, makeOperatorClient } from "@convene/client"
import { CreateMeeting, CreateUser, CreateWorkspace, Email, IssueToken } from "@convene/core"
import { DateTime, Effect, Redacted } from "effect"

const baseUrl = process.env.CONVENE_URL
const operator = makeOperatorClient({ baseUrl, token: Redacted.make(process.env.CONVENE_OPERATOR_TOKEN) })
const workspace = await Effect.runPromise(operator.operator.createWorkspace({ payload: CreateWorkspace.make({ name: "Packaged", plan: "PRO" }) }))
const user = await Effect.runPromise(operator.operator.createUser({
  path: { id: workspace.id },
  payload: CreateUser.make({ email: Email.make("ann@example.com"), name: "Ann", role: "OWNER" })
}))
const { token } = await Effect.runPromise(operator.operator.issueToken({
  path: { id: user.id },
  payload: IssueToken.make({ kind: "personal_access_token", scopes: ["meetings:read", "meetings:write"], expiry_days: 30 })
}))

const convene = makeClient({ baseUrl, token })
const created = await Effect.runPromise(convene.meetings.create({
  payload: CreateMeeting.make({ title: "Weekly sync", start_time: DateTime.unsafeMake("2030-12-01T09:00:00Z") }),
  headers: { "idempotency-key": "first-meeting" }
}))
const listed = await Effect.runPromise(convene.meetings.list({ urlParams: {} }))
const refused = await Effect.runPromise(Effect.flip(makeClient({ baseUrl, token: "svc_pat_unknown" }).meetings.list({ urlParams: {} })))
console.log(JSON.stringify({ owner: created.owner_user_id === user.id, listed: listed.items.map((m) => m.title), refused: refused._tag }))
`
      )
      const { stdout } = await run(process.execPath, ["client.mjs"], { cwd: consumer, env: env({ CONVENE_URL: url, CONVENE_OPERATOR_TOKEN: OPERATOR_TOKEN }) })
      expect(JSON.parse(stdout)).toEqual({ owner: true, listed: ["Weekly sync"], refused: "Unauthenticated" })

      // SIGTERM to the server itself, as a process manager sends it. (npx runs it under `sh -c`, which does not
      // pass a SIGTERM sent to npx on to the server; a terminal's Ctrl-C reaches the whole group.)
      process.kill(await serverPid(child), "SIGTERM")
      const [code, signal] = await exited
      expect({ code, signal }, output).toEqual({ code: 0, signal: null })
      expect(output).toContain("\"msg\":\"stopped\"")
    } finally {
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, "SIGKILL")
    }
  }, 120_000)

  it("types resolve from dist/*.d.ts under nodenext and bundler resolution; the READMEs' examples compile", async () => {
    // The README's embedding snippet (test/packaging/readme.test.ts keeps it equal to this file) and every
    // TypeScript example of the packages' READMEs, each a module of its own.
    const examples = ["quickstart.ts"]
    Fs.copyFileSync(Path.join(root, "examples", "embed-memory", "src", "quickstart.ts"), Path.join(consumer, "quickstart.ts"))
    for (const dir of packageDirs) {
      const readme = Path.join(dir, "README.md")
      if (!Fs.existsSync(readme)) continue
      const blocks = [...Fs.readFileSync(readme, "utf8").matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!)
      blocks.forEach((block, index) => {
        const file = `readme-${Path.basename(dir)}-${index}.ts`
        Fs.writeFileSync(Path.join(consumer, file), block)
        examples.push(file)
      })
    }
    expect(examples.length).toBeGreaterThan(6)
    Fs.writeFileSync(
      Path.join(consumer, "consumer.ts"),
      `import { ConveneClient, makeClient, makeOperatorClient, type Client } from "@convene/client"
import { Convene, CreateMeeting, Meetings, type Meeting } from "@convene/core"
import { Api } from "@convene/http"
import { PublicApi } from "@convene/api/Api"
import { NodeCrypto } from "@convene/node"
import * as StoreMemory from "@convene/store-memory"
import * as StorePg from "@convene/store-pg"
import { Effect, Layer } from "effect"

const CoreLive = Convene.layer.pipe(Layer.provide(Layer.merge(StoreMemory.layer, NodeCrypto.layer)))
export const OnPglite = Convene.layer.pipe(Layer.provide(Layer.merge(StorePg.layerPgliteConfig, NodeCrypto.layer)))
export const embedded = Effect.map(Meetings, (meetings) => meetings.search).pipe(Effect.provide(CoreLive))
const client: Client = makeClient({ baseUrl: "http://127.0.0.1:8080", token: "svc_pat_x" })
export const created: Effect.Effect<Meeting, unknown> = client.meetings.create({
  payload: CreateMeeting.make({ title: "Typed", is_instant: true }),
  headers: {}
})
export const listed = Effect.flatMap(ConveneClient, (convene) => convene.meetings.list({ urlParams: { limit: 5 } }))
export const operator = makeOperatorClient({ baseUrl: "http://127.0.0.1:8080", token: "op" }).operator.listWorkspaces({ urlParams: {} })
export const contracts = [Api, PublicApi]
// @ts-expect-error the types are the packages' own, not any: a group is no string
export const notAString: string = client.meetings
`
    )
    const compile = async (module: string, moduleResolution: string) => {
      const config = `tsconfig.${moduleResolution}.json`
      Fs.writeFileSync(
        Path.join(consumer, config),
        JSON.stringify({
          compilerOptions: {
            module,
            moduleResolution,
            target: "ES2022",
            lib: ["ES2022", "DOM"],
            types: [],
            strict: true,
            noEmit: true,
            // @effect/sql-pg's declarations import `pg`, which ships none (@types/pg): the common setting.
            skipLibCheck: true
          },
          files: ["consumer.ts", ...examples]
        })
      )
      const { stdout } = await run(process.execPath, [tsc, "-p", config, "--listFiles"], { cwd: consumer })
      return stdout.split("\n").filter((file) => file.includes("/node_modules/@convene/"))
    }
    const [nodenext, bundler] = await Promise.all([compile("NodeNext", "NodeNext"), compile("ESNext", "Bundler")])
    for (const files of [nodenext, bundler]) {
      const packages = new Set(files.map((file) => /\/node_modules\/(@convene\/[^/]+)\//.exec(file)![1]))
      expect([...packages]).toEqual(
        expect.arrayContaining(["@convene/api", "@convene/client", "@convene/core", "@convene/http", "@convene/node", "@convene/store-memory", "@convene/store-pg"])
      )
      expect(files.filter((file) => !/\/node_modules\/@convene\/[^/]+\/dist\/.+\.d\.ts$/.test(file))).toEqual([])
    }
  }, 120_000)

  it("@convene/client installs alone, without the server's dependencies, and bundles for browsers without node:*", async () => {
    const alone = Path.join(work, "client-alone")
    Fs.mkdirSync(alone)
    Fs.writeFileSync(Path.join(alone, "package.json"), JSON.stringify({ name: "client-alone", private: true, type: "module" }))
    const own = tarballs.filter((tarball) => /convene-(api|client|core)-/.test(Path.basename(tarball)))
    await run("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error", ...own], { cwd: alone })
    const installed = Fs.readdirSync(Path.join(alone, "node_modules"), { recursive: true, encoding: "utf8" })
      .filter((entry) => entry.endsWith("package.json") && entry.split("node_modules").length === 1)
      .map((entry) => Path.dirname(entry))
      .filter((name) => name !== "." && !name.includes("/dist") && !name.includes("/src"))
    expect(installed.filter((name) => name.startsWith("@convene/")).sort()).toEqual(["@convene/api", "@convene/client", "@convene/core"])
    // The server's drivers and the like are not there: the client's install is the contract, effect and its peers.
    expect(installed.filter((name) => /^(pg|@electric-sql|@opentelemetry|@scalar|@effect\/(sql|platform-node))/.test(name))).toEqual([])

    const result = await build({
      stdin: { contents: `export * from "@convene/client"`, resolveDir: alone, loader: "js" },
      absWorkingDir: alone,
      bundle: true,
      platform: "browser",
      format: "esm",
      write: false,
      metafile: true,
      logLevel: "silent"
    })
    const inputs = Object.keys(result.metafile.inputs)
    expect(inputs.filter((input) => input.startsWith("node:"))).toEqual([])
    expect(inputs.some((input) => input.includes("node_modules/@convene/api/dist/Api.js"))).toBe(true)
  }, 120_000)
})

const freePort = async (): Promise<number> => {
  const server = createServer().listen(0, "127.0.0.1")
  await once(server, "listening")
  const address = server.address()
  server.close()
  if (address === null || typeof address === "string") throw new Error("no port")
  return address.port
}

/** Waits until /readyz answers 200; fails with the output when the process exits first or takes over 60 s. */
const ready = async (child: ChildProcess, url: string, output: () => string) => {
  const deadline = Date.now() + 60_000
  for (;;) {
    if (child.exitCode !== null) throw new Error(`\`npx convene serve\` exited with ${child.exitCode}:\n${output()}`)
    if (Date.now() > deadline) throw new Error(`\`npx convene serve\` was not ready within 60 s:\n${output()}`)
    if (await fetch(`${url}/readyz`).then((response) => response.status === 200, () => false)) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** The server's own process in npx's process group: the Node process running the `convene` bin. */
const serverPid = async (child: ChildProcess): Promise<number> => {
  const { stdout } = await run("ps", ["-e", "-o", "pid=,pgid=,args="], { cwd: work })
  const match = stdout.split("\n").map((line) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line)).find((fields) =>
    fields !== null && Number(fields[2]) === child.pid && /node\S*\s+\S*convene\S*\s+serve/.test(fields[3]!)
  )
  if (!match) throw new Error(`no \`convene serve\` process in group ${child.pid}:\n${stdout}`)
  return Number(match[1])
}
