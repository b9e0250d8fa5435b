#!/usr/bin/env node
/**
 * `pnpm mutate`: mutation testing of packages/core and packages/store-memory with StrykerJS
 * (test/mutation/stryker.config.mjs), then the score per package. See docs/quality.md.
 *
 *   pnpm mutate                  every mutant (and records the results for later incremental runs)
 *   pnpm mutate --incremental    only the mutants whose code or covering tests changed since the last run
 *   pnpm mutate:incremental      the same
 *   pnpm mutate --with-static    every mutant, including the static ones (ignored otherwise: hours here)
 *
 * Other arguments go to `stryker run` unchanged (for example `--mutate packages/core/src/shared/Time.ts`).
 * Reports: reports/mutation/mutation.html, mutation.json, and survivors.txt (the mutants no test kills).
 */
import { spawnSync } from "node:child_process"
import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, isAbsolute, join, relative, sep } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../..", import.meta.url))
const config = "test/mutation/stryker.config.mjs"
const reportDir = join(root, "reports", "mutation")
const jsonReport = join(reportDir, "mutation.json")
const survivorsFile = join(reportDir, "survivors.txt")

const args = process.argv.slice(2)
const withStatic = args.includes("--with-static")
const incremental = args.includes("--incremental") && !withStatic
const passThrough = args.filter((arg) => !["--incremental", "--with-static", "--"].includes(arg))

// Both modes run incrementally, so that both keep node_modules/.cache/stryker/incremental.json up to date;
// the full run adds --force, which tests every mutant regardless of what that file says.
const strykerArgs = ["run", config, "--incremental", ...(incremental ? [] : ["--force"]), ...passThrough]
const strykerBin = join(dirname(createRequire(import.meta.url).resolve("@stryker-mutator/core/package.json")), "bin", "stryker.js")

console.log(`> ${withStatic ? "MUTATE_WITH_STATIC=1 " : ""}stryker ${strykerArgs.join(" ")}`)
const started = Date.now()
const run = spawnSync(process.execPath, [strykerBin, ...strykerArgs], {
  cwd: root,
  stdio: "inherit",
  env: { ...process.env, MUTATE_WITH_STATIC: withStatic ? "1" : "0" }
})
const seconds = Math.round((Date.now() - started) / 1000)
if (run.error) throw run.error
if (run.status !== 0) {
  console.error(`stryker exited with ${run.status ?? run.signal} after ${formatDuration(seconds)}`)
  process.exit(run.status ?? 1)
}

const report = JSON.parse(readFileSync(jsonReport, "utf8"))

/** Counts per package (packages/<name>/...), plus the survivors and the mutants no test covers. */
const STATUSES = ["Killed", "Timeout", "Survived", "NoCoverage", "CompileError", "RuntimeError", "Ignored", "Pending"]
const packages = new Map()
const notKilled = []
for (const [file, { mutants }] of Object.entries(report.files)) {
  const path = (isAbsolute(file) ? relative(root, file) : file).split(sep).join("/")
  const name = /^packages\/([^/]+)\//.exec(path)?.[1] ?? path
  const counts = packages.get(name) ?? Object.fromEntries(STATUSES.map((status) => [status, 0]))
  packages.set(name, counts)
  for (const mutant of mutants) {
    counts[mutant.status] = (counts[mutant.status] ?? 0) + 1
    if (mutant.status === "Survived" || mutant.status === "NoCoverage") notKilled.push({ path, ...mutant })
  }
}

const rows = [...packages.entries()].sort(([a], [b]) => a.localeCompare(b))
const total = Object.fromEntries(STATUSES.map((status) => [status, rows.reduce((sum, [, c]) => sum + c[status], 0)]))
if (rows.length > 1) rows.push(["all", total])

const columns = [
  ["package", (name) => name],
  ["killed", (_, c) => c.Killed],
  ["timeout", (_, c) => c.Timeout],
  ["survived", (_, c) => c.Survived],
  ["no coverage", (_, c) => c.NoCoverage],
  ["compile errors", (_, c) => c.CompileError],
  ["runtime errors", (_, c) => c.RuntimeError],
  ["ignored", (_, c) => c.Ignored],
  ["total valid", (_, c) => valid(c)],
  ["score %", (_, c) => (valid(c) === 0 ? "n/a" : ((100 * (c.Killed + c.Timeout)) / valid(c)).toFixed(2))]
]
function valid(c) {
  return c.Killed + c.Timeout + c.Survived + c.NoCoverage
}
const cells = [columns.map(([title]) => title), ...rows.map(([name, c]) => columns.map(([, cell]) => String(cell(name, c))))]
const widths = columns.map((_, i) => Math.max(...cells.map((row) => row[i].length)))
const line = (row) => row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join("  ")

console.log("")
console.log("Mutation score per package")
console.log("score % = (killed + timeout) / total valid mutants, where total valid = killed + timeout + survived + no coverage")
console.log("(compile errors, runtime errors and ignored mutants are not valid mutants and do not count;")
console.log(withStatic ? " static mutants were tested)" : " ignored = static mutants, not tested: pnpm mutate --with-static tests them)")
console.log("")
console.log(line(cells[0]))
console.log(widths.map((w) => "-".repeat(w)).join("  "))
for (const row of cells.slice(1)) console.log(line(row))
console.log("")

const oneLine = (text) => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > 160 ? `${flat.slice(0, 157)}...` : flat
}
notKilled.sort((a, b) => a.path.localeCompare(b.path) || a.location.start.line - b.location.start.line ||
  a.location.start.column - b.location.start.column)
mkdirSync(reportDir, { recursive: true })
writeFileSync(
  survivorsFile,
  [
    "# Mutants no test kills: status<TAB>file:line:column<TAB>mutator<TAB>replacement (whitespace collapsed)",
    ...notKilled.map((m) =>
      [m.status, `${m.path}:${m.location.start.line}:${m.location.start.column}`, m.mutatorName, oneLine(m.replacement ?? "")].join("\t")
    )
  ].join("\n") + "\n"
)
console.log(`Surviving and uncovered mutants: ${relative(root, survivorsFile)} (${notKilled.length})`)
console.log(`HTML report: ${relative(root, join(reportDir, "mutation.html"))}`)
console.log(`Run time: ${formatDuration(seconds)}${incremental ? " (incremental)" : withStatic ? " (with static mutants)" : ""}`)

function formatDuration(s) {
  return `${Math.floor(s / 60)} min ${s % 60} s`
}
