/**
 * The README's examples as a reader runs them: the embedding snippet is examples/embed-memory/src/quickstart.ts
 * word for word (type-checked by `pnpm typecheck`, and against the installed packages by packaging.test.ts), and
 * the curl walkthrough runs to its end twice in a row against the compiled server.
 */
import { execFile, spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type ServerProcess, startServerProcess } from "../support/process.js"

const root = fileURLToPath(new URL("../..", import.meta.url))
const readme = Fs.readFileSync(Path.join(root, "README.md"), "utf8")

/** The fenced blocks of `language` in the section under `heading` (up to the next heading). */
const blocks = (heading: string, language: string): ReadonlyArray<string> => {
  const start = readme.indexOf(`\n${heading}\n`)
  if (start < 0) throw new Error(`no "${heading}" in README.md`)
  const rest = readme.slice(start + heading.length + 2)
  const section = rest.slice(0, rest.search(/^#/m) < 0 ? undefined : rest.search(/^#/m))
  return [...section.matchAll(new RegExp("^```" + language + "\\n([\\s\\S]*?)^```", "gm"))].map((match) => match[1]!)
}

describe("README.md", () => {
  it("Embedding shows examples/embed-memory/src/quickstart.ts as it is", () => {
    expect(blocks("### Embedding", "ts")).toEqual([Fs.readFileSync(Path.join(root, "examples", "embed-memory", "src", "quickstart.ts"), "utf8")])
  })

  describe("the walkthrough (Provision a workspace and call the API)", () => {
    const tools = ["bash", "curl", "jq"].every((tool) => spawnSync(tool, ["--version"]).status === 0)
    const TOKEN = "readme-walkthrough-operator-token-0123456789"
    let server: ServerProcess | undefined
    beforeAll(async () => {
      if (tools) server = await startServerProcess({ CONVENE_STORE: "memory", CONVENE_OPERATOR_TOKEN: TOKEN })
    })
    afterAll(() => server?.stop())

    /** The README's second shell block, on the test server's address, stopping at the first failure. */
    const walk = (operatorToken = TOKEN) =>
      new Promise<{ readonly code: number; readonly output: string }>((resolve) => {
        const walkthrough = blocks("### Provision a workspace and call the API", "sh").find((sh) => sh.includes("/operator/v1/workspaces"))
        if (walkthrough === undefined) throw new Error("no walkthrough in README.md")
        execFile(
          "bash",
          ["-c", `set -euo pipefail\n${walkthrough.replaceAll("http://127.0.0.1:8080", server!.url)}`],
          { env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", CONVENE_OPERATOR_TOKEN: operatorToken } },
          (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, output: stdout + stderr })
        )
      })

    it.runIf(tools)("runs to its end, and again (a new e-mail address each run)", async () => {
      const first = await walk()
      expect(first, first.output).toMatchObject({ code: 0 })
      expect(first.output).toContain("\"title\": \"Weekly sync\"")
      // The address carries the time in seconds: the second run starts in the next second, as a person's would.
      const second = Math.floor(Date.now() / 1000) + 1
      await new Promise((resolve) => setTimeout(resolve, second * 1000 - Date.now()))
      const again = await walk()
      expect(again, again.output).toMatchObject({ code: 0 })
      expect(again.output).toContain("\"title\": \"Weekly sync\"")
    }, 60_000)

    it.runIf(tools)("stops at a failure and shows its error envelope", async () => {
      const failed = await walk("not-the-operator-token-0123456789-abcdef")
      expect(failed.code).not.toBe(0)
      expect(failed.output).toContain("returned error: 401")
      expect(failed.output).toMatch(/jq: error .*"code":"invalid_token"/)
    }, 30_000)
  })
})
