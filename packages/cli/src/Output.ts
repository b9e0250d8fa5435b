/**
 * What the commands print. For people (the default): aligned tables of a sensible subset of fields, a
 * `field  value` block for one resource, times in UTC to the second. For scripts (`--json`): the body the
 * server answered, exactly, as one JSON document (nothing for a 204). Messages that are not the answer
 * (a secret shown once, a page that continues) go to standard error, so standard output stays the answer.
 */
import { Console, DateTime, Effect } from "effect"
import type { Answer } from "./OperatorClient.js"

export type Cell = string | number | boolean | null | undefined

export interface Column<A> {
  readonly header: string
  readonly value: (row: A) => Cell
}

const text = (cell: Cell): string => (cell === null || cell === undefined || cell === "" ? "-" : String(cell))

/** Rows under upper-case headers, columns two spaces apart, the last column not padded. */
export const table = <A>(rows: ReadonlyArray<A>, columns: ReadonlyArray<Column<A>>): string => {
  const cells = [columns.map((column) => column.header.toUpperCase()), ...rows.map((row) => columns.map((column) => text(column.value(row))))]
  const widths = columns.map((_, i) => Math.max(...cells.map((line) => line[i]!.length)))
  return cells.map((line) => line.map((cell, i) => (i === line.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ")).join("\n")
}

/** One resource: a `field  value` line per field. */
export const fields = (pairs: ReadonlyArray<readonly [string, Cell]>): string => {
  const width = Math.max(...pairs.map(([name]) => name.length))
  return pairs.map(([name, value]) => `${name.padEnd(width)}  ${text(value)}`).join("\n")
}

/** An instant as `2026-05-01 09:30:00Z` (UTC, to the second). */
export const time = (at: DateTime.DateTime | null): string | null =>
  at === null ? null : DateTime.formatIso(at).replace("T", " ").replace(/\.\d+Z$/, "Z")

export const list = (values: ReadonlyArray<string>): string => values.join(",")

export interface Page<A> {
  readonly items: ReadonlyArray<A>
  readonly total: number
  readonly offset: number
}

/** A page as a table, or `none` when it is empty; a note on standard error when there is more. */
export const pageTable = <A>(page: Page<A>, columns: ReadonlyArray<Column<A>>, none: string): Effect.Effect<void> =>
  Effect.gen(function*() {
    if (page.items.length === 0) {
      yield* Console.log(page.total > 0 ? `${none} at offset ${page.offset} (${page.total} in all).` : none)
      return
    }
    yield* Console.log(table(page.items, columns))
    const shown = page.offset + page.items.length
    if (shown < page.total) {
      yield* Console.error(`Showing ${page.offset + 1}-${shown} of ${page.total}; --offset ${shown} for more.`)
    }
  })

/** The answer: its body as the server sent it with `--json`, else `human` of its value. */
export const show = <A>(answer: Answer<A>, json: boolean, human: (value: A) => Effect.Effect<void>): Effect.Effect<void> =>
  json ? (answer.body === "" ? Effect.void : Console.log(answer.body)) : human(answer.value)
