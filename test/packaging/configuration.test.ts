/**
 * The configuration as documented: every environment variable the server and the CLI read (found in their sources,
 * not listed here by hand) is in .env.example and in the README's configuration table, and the values .env.example
 * sets are the ones the server takes when they are unset.
 */
import { hostConfig, storeChoice } from "@convene/http"
import { ConfigProvider, Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../..", import.meta.url))
const read = (...path: ReadonlyArray<string>) => Fs.readFileSync(Path.join(root, ...path), "utf8")

/** The TypeScript sources under a package's folder, recursively. */
const sourcesIn = (folder: string): ReadonlyArray<string> =>
  Fs.readdirSync(Path.join(root, folder), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .map((file) => Path.join(folder, file))

/**
 * The variables a source reads: the name in `Config.xxx("NAME")` (or in a helper called with it, such as
 * `milliseconds("CONVENE_EVENT_POLL_MS", ...)`: any string that is exactly such a name) and in `process.env.NAME`.
 */
const variablesIn = (source: string): ReadonlyArray<string> => [
  ...[...source.matchAll(/"((?:CONVENE|OTEL)_[A-Z0-9_]+|DATABASE_URL|PORT|HOST)"/g)].map((match) => match[1]!),
  ...[...source.matchAll(/process\.env\.([A-Z][A-Z0-9_]*)/g)].map((match) => match[1]!)
]

const files = [...sourcesIn("packages/http/src"), ...sourcesIn("packages/cli/src")]
const variables = [...new Set(files.flatMap((file) => variablesIn(read(file))))].sort()

/**
 * The standard OpenTelemetry variables, which the SDK reads itself and the documents name together in one row (the
 * README's OTLP row) and one comment (.env.example's): a mention is enough for them.
 */
const isStandard = (name: string) => name.startsWith("OTEL_")

const envExample = read(".env.example")
const readme = read("README.md")
const configurationTable = readme.slice(readme.indexOf("## Configuration"), readme.indexOf("\n## ", readme.indexOf("## Configuration") + 1))
/** The names in backticks in the table's first column (a row may name several: "`PORT`, `HOST`"). */
const tableNames = new Set(
  configurationTable.split("\n")
    .filter((line) => line.startsWith("| `"))
    .flatMap((line) => [...line.split("|")[1]!.matchAll(/`([A-Z0-9_]+)`/g)].map((match) => match[1]!))
)

/** `NAME=value` lines of .env.example, commented out or not, as name to value. */
const assignments = (text: string, options: { readonly commented: boolean }) =>
  new Map(
    text.split("\n").flatMap((line) => {
      const match = /^(# )?([A-Z][A-Z0-9_]*)=(.*)$/.exec(line)
      return match === null || (match[1] !== undefined && !options.commented) ? [] : [[match[2]!, match[3]!] as const]
    })
  )

describe("configuration documents", () => {
  it("finds the variables in the sources (the collector reads what it should)", () => {
    expect(variables).toEqual(expect.arrayContaining([
      "PORT",
      "HOST",
      "DATABASE_URL",
      "CONVENE_EVENT_POLL_MS",
      "CONVENE_METRICS_PORT",
      "CONVENE_URL",
      "OTEL_SERVICE_NAME",
      "OTEL_EXPORTER_OTLP_ENDPOINT"
    ]))
  })

  it("lists every variable in .env.example, as NAME=default (commented out when unset by default)", () => {
    const listed = assignments(envExample, { commented: true })
    const missing = variables.filter((name) => isStandard(name) ? !envExample.includes(name) : !listed.has(name))
    expect(missing).toEqual([])
  })

  it("lists every variable in the README's configuration table, the OTEL_* ones in the OTLP row", () => {
    const missing = variables.filter((name) =>
      isStandard(name) ? !configurationTable.includes(name) : !tableNames.has(name)
    )
    expect(missing).toEqual([])
  })

  it("sets in .env.example only values the server accepts, and they are its defaults", async () => {
    const set = assignments(envExample, { commented: false })
    const configured = (map: ReadonlyMap<string, string>) =>
      Effect.runPromise(
        Effect.all([hostConfig, storeChoice]).pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(map))))
      )
    expect(set.size).toBeGreaterThan(10)
    expect(await configured(set)).toEqual(await configured(new Map()))
  })
})
