/**
 * The OpenAPI documents a real server serves, linted with Redocly's recommended rules (@redocly/openapi-core,
 * offline: no telemetry, no remote rulesets). test/redocly.yaml extends `recommended`; every rule it turns off
 * says why there. Zero errors and zero warnings are allowed: the problems are printed when there are any.
 */
import { createConfig, type NormalizedProblem, lintFromString, loadConfig } from "@redocly/openapi-core"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { OPERATOR_TOKEN } from "../support/server.js"
import { useServer } from "./fixtures.js"

const configPath = fileURLToPath(new URL("../redocly.yaml", import.meta.url))

/** One line per problem: severity, rule, where in the document, and what is wrong. */
const describeProblems = (problems: ReadonlyArray<NormalizedProblem>) =>
  problems.map((problem) => {
    const where = problem.location.map((location) => location.pointer ?? "").join(", ")
    return `${problem.severity} ${problem.ruleId} at ${where}: ${problem.message}`
  }).join("\n")

const lint = async (document: unknown) =>
  lintFromString({
    source: JSON.stringify(document, null, 2),
    absoluteRef: "/openapi.json",
    config: await loadConfig({ configPath })
  })

const fetchDocument = async (url: string, headers: Record<string, string> = {}) => {
  const response = await fetch(url, { headers })
  expect(response.status).toBe(200)
  return response.json() as Promise<unknown>
}

describe("the OpenAPI documents pass Redocly's recommended rules", () => {
  const server = useServer()

  it("the public document at /v1/openapi.json: no error, no warning", async () => {
    const problems = await lint(await fetchDocument(`${server.url}/v1/openapi.json`))
    expect(problems, describeProblems(problems)).toEqual([])
  })

  it("every operation has a 2xx answer but the consent form's POST, which redirects (the rule test/redocly.yaml turns off)", async () => {
    const document = await fetchDocument(`${server.url}/v1/openapi.json`) as {
      readonly paths: Record<string, Record<string, { readonly responses?: Record<string, unknown> }>>
    }
    const without = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.entries(operations)
        .filter(([, operation]) => !Object.keys(operation.responses ?? {}).some((status) => status.startsWith("2")))
        .map(([method]) => `${method.toUpperCase()} ${path}`)
    )
    expect(without).toEqual(["POST /v1/oauth/authorize"])
  })

  it("the operator document at /operator/v1/openapi.json: no error, no warning", async () => {
    const problems = await lint(await fetchDocument(`${server.url}/operator/v1/openapi.json`, { authorization: `Bearer ${OPERATOR_TOKEN}` }))
    expect(problems, describeProblems(problems)).toEqual([])
  })

  it("the linter sees what it is asked to: without summaries, servers, license or tag descriptions it fails", async () => {
    const document = await fetchDocument(`${server.url}/v1/openapi.json`) as {
      readonly info: object
      readonly tags: ReadonlyArray<object>
      readonly paths: Record<string, Record<string, object>>
    }
    const bare = {
      ...document,
      info: { ...document.info, license: undefined },
      servers: [],
      tags: document.tags.map((tag) => ({ ...tag, description: undefined })),
      paths: Object.fromEntries(Object.entries(document.paths).map(([path, operations]) => [
        path,
        Object.fromEntries(Object.entries(operations).map(([method, operation]) => [method, { ...operation, summary: undefined }]))
      ]))
    }
    const found = (problems: ReadonlyArray<NormalizedProblem>, severity: string) =>
      [...new Set(problems.filter((problem) => problem.severity === severity).map((problem) => problem.ruleId))].sort()
    const problems = await lint(bare)
    expect(found(problems, "error")).toEqual(["no-empty-servers", "operation-summary"])
    expect(found(problems, "warn")).toEqual(["info-license", "tag-description"])
    // test/redocly.yaml turns none of these off: the recommended rules alone find the same, and the one rule it
    // does turn off (for the consent form's redirect, checked above) besides.
    const recommended = await createConfig({ extends: ["recommended"] })
    const plain = await lintFromString({ source: JSON.stringify(bare), absoluteRef: "/openapi.json", config: recommended })
    expect(found(plain, "error")).toEqual(found(problems, "error"))
    expect(found(plain, "warn")).toEqual([...found(problems, "warn"), "operation-2xx-response"].sort())
  })
})
