/** Helpers shared by the store modules: column codecs, error mapping at the adapter edge, pages. */
import type { Pagination } from "@convene/core"
import { DuplicateKey } from "@convene/core"
import { type SqlClient, SqlError, type Statement } from "@effect/sql"
import { Effect, type ParseResult, Schema } from "effect"

/** A `timestamptz` column: the drivers read it as a `Date` and accept a `Date` as parameter. */
export const DbTimestamp = Schema.DateTimeUtcFromDate

/** A nullable `timestamptz` column. */
export const DbTimestampOrNull = Schema.NullOr(DbTimestamp)

/**
 * Constructor options for a domain class built from a row that its schema has just decoded field by field:
 * validating it again would only cost time.
 */
export const alreadyDecoded = { disableValidation: true } as const

const uniqueViolation = (error: SqlError.SqlError): string | undefined => {
  const cause = error.cause as { readonly code?: unknown; readonly constraint?: unknown } | undefined
  return cause?.code === "23505" ? (typeof cause.constraint === "string" ? cause.constraint : "unknown") : undefined
}

/** Failures of the infrastructure are defects: the ports do not type them. */
export const orDie = <A, R>(effect: Effect.Effect<A, SqlError.SqlError | ParseResult.ParseError, R>): Effect.Effect<A, never, R> =>
  Effect.orDie(effect)

/**
 * Runs a write that a unique index may refuse, inside a savepoint (a transaction when none is open) so that
 * the refusal leaves an enclosing transaction usable. A unique violation becomes `DuplicateKey` naming the
 * constraint; any other failure is a defect.
 */
export const uniqueWrite = <A, R>(
  sql: SqlClient.SqlClient,
  effect: Effect.Effect<A, SqlError.SqlError | ParseResult.ParseError, R>
): Effect.Effect<A, DuplicateKey, R> =>
  sql.withTransaction(effect).pipe(
    Effect.catchAll((error) => {
      const constraint = error._tag === "SqlError" ? uniqueViolation(error) : undefined
      return constraint === undefined ? Effect.die(error) : Effect.fail(new DuplicateKey({ constraint }))
    })
  )

/** The SqlError of the @effect/sql package, for `instanceof` checks. */
export const isSqlError = (u: unknown): u is SqlError.SqlError => u instanceof SqlError.SqlError

/**
 * One page of `from` (a fragment holding `FROM ... WHERE ...`) in `order`, with the total number of rows that
 * match. `columns` lists what to select. The total rides along on each row (`count(*) OVER ()`); only when
 * the page is empty past the first row is it counted separately.
 */
export const page = <A, I, R>(
  sql: SqlClient.SqlClient,
  options: {
    readonly row: Schema.Schema<A, I, R>
    readonly columns: Statement.Fragment
    readonly from: Statement.Fragment
    readonly order: Statement.Fragment
    readonly page: Pagination.Page
  }
): Effect.Effect<Pagination.Slice<A>, SqlError.SqlError | ParseResult.ParseError, R> =>
  Effect.gen(function*() {
    const rows = yield* sql<{ readonly total: number }>`
      SELECT ${options.columns}, (count(*) OVER ())::int AS total
      ${options.from}
      ORDER BY ${options.order}
      LIMIT ${options.page.limit} OFFSET ${options.page.offset}`
    const items = yield* Schema.decodeUnknown(Schema.Array(options.row))(rows)
    if (rows.length > 0) return { items, total: rows[0]!.total }
    if (options.page.offset === 0) return { items, total: 0 }
    const counted = yield* sql<{ readonly total: number }>`SELECT count(*)::int AS total ${options.from}`
    return { items, total: counted[0]?.total ?? 0 }
  })
