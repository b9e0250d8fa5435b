/** Helpers shared by the store modules: rows of domain records, error mapping at the adapter edge, pages. */
import type { Pagination } from "@convene/core"
import { DuplicateKey, Timestamp, trusted, WorkspaceId } from "@convene/core"
import * as SqlError from "@effect/sql/SqlError"
import * as SqlSchema from "@effect/sql/SqlSchema"
import type * as SqlClient from "@effect/sql/SqlClient"
import type * as Statement from "@effect/sql/Statement"
import { Effect, Option, type ParseResult, Schema, SchemaAST } from "effect"

/** A `timestamptz` column: the drivers read it as a `Date` and accept a `Date` as parameter. */
export const DbTimestamp = Schema.DateTimeUtcFromDate

/** A nullable `timestamptz` column. */
export const DbTimestampOrNull = Schema.NullOr(DbTimestamp)

const isNullableTimestamp = (ast: SchemaAST.AST) =>
  SchemaAST.isUnion(ast) && ast.types.length === 2 && ast.types.includes(Timestamp.ast) &&
  ast.types.some((member) => SchemaAST.isLiteral(member) && member.literal === null)

/** A class's fields in column form: `Timestamp` fields become `timestamptz` columns. */
type Columns<Fields extends Schema.Struct.Fields> = {
  readonly [K in keyof Fields]: Fields[K] extends typeof Timestamp ? typeof DbTimestamp
    : Fields[K] extends Schema.NullOr<typeof Timestamp> ? typeof DbTimestampOrNull
    : Fields[K]
}

const columnsOf = <Fields extends Schema.Struct.Fields>(fields: Fields): Columns<Fields> => {
  const columns: Record<string, Schema.Struct.Field> = {}
  for (const [name, field] of Object.entries(fields)) {
    columns[name] = Schema.isSchema(field) && field.ast === Timestamp.ast
      ? DbTimestamp
      : Schema.isSchema(field) && isNullableTimestamp(field.ast)
      ? DbTimestampOrNull
      : field
  }
  return columns as Columns<Fields>
}

/** What `rowOf` needs of a domain class (a `Schema.Class`): its fields, and its constructor. */
interface RecordClass<Self, Fields extends Schema.Struct.Fields> {
  readonly fields: Fields
  new(props: Schema.Struct.Type<Fields>, options: typeof trusted): Self
}

/**
 * The row schema of a table that stores one domain class: the class's fields, timestamps as `timestamptz`,
 * and `overrides` for the columns the table keeps in another form. A decoded row becomes the class without a
 * second validation (its fields were just decoded one by one); a class encodes to a row for `sql.insert`.
 */
export const rowOf = <Self, Fields extends Schema.Struct.Fields, Overrides extends Schema.Struct.Fields>(
  record: RecordClass<Self, Fields>,
  overrides: Overrides
) => {
  const row = Schema.Struct({ ...columnsOf(record.fields), ...overrides })
  const instance = Schema.declare((u: unknown): u is Self => u instanceof record)
  return Schema.transform(row, instance, {
    strict: false,
    decode: (fields) => new record(fields as Schema.Struct.Type<Fields>, trusted),
    encode: (value) => ({ ...value })
  })
}

/** Column values to look a row up by. */
type Where<I> = { readonly [K in keyof I & string]?: string }

const isColumnValue = (entry: [string, unknown]): entry is [string, string] => typeof entry[1] === "string"

/**
 * The statements of a table that stores one domain record (see `rowOf`): insert, update of every column but
 * the key (the row is found by its key), and the first row with given column values. `key` names the columns
 * that identify a row; `columns` is the select list when the table needs one (casts for columns the drivers
 * would read in another form).
 */
export const recordTable = <A, I extends Record<string, unknown>>(
  sql: SqlClient.SqlClient,
  options: {
    readonly table: string
    readonly row: Schema.Schema<A, I>
    readonly key: ReadonlyArray<keyof I & string>
    readonly columns?: string
    /** Columns the table keeps beside the record's own, computed from it on every insert and update. */
    readonly derived?: (value: A) => Readonly<Record<string, string | number | boolean | null>>
  }
) => {
  const derived = options.derived ?? (() => ({}))
  const table = sql(options.table)
  const select = sql.literal(options.columns ?? "*")
  const where = (values: ReadonlyArray<readonly [column: string, value: string]>) =>
    sql.and(values.map(([column, value]) => sql`${sql(column)} = ${value}`))
  // Key columns hold ids, which are strings.
  const keyOf = (row: I) => options.key.map((column) => [column, String(row[column])] as const)
  const decode = Schema.decodeUnknown(options.row)
  const insert = (value: A) =>
    SqlSchema.void({
      Request: options.row,
      execute: (row) => sql`INSERT INTO ${table} ${sql.insert({ ...row, ...derived(value) })}`
    })(value)
  const update = (value: A) =>
    SqlSchema.void({
      Request: options.row,
      execute: (row) => sql`UPDATE ${table} SET ${sql.update({ ...row, ...derived(value) }, options.key)} WHERE ${where(keyOf(row))}`
    })(value)
  const find = (values: Where<I>) =>
    Effect.flatMap(
      sql`SELECT ${select} FROM ${table} WHERE ${where(Object.entries(values).filter(isColumnValue))} LIMIT 1`,
      (rows) => rows.length === 0 ? Effect.succeed(Option.none<A>()) : Effect.map(decode(rows[0]), Option.some)
    )
  return {
    insert: (value: A) => orDie(insert(value)),
    update: (value: A) => orDie(update(value)),
    /** The row whose columns equal `values` (ids and other text columns). */
    find: (values: Where<I>) => orDie(find(values))
  }
}

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
    const first = rows[0]
    if (first !== undefined) return { items, total: first.total }
    if (options.page.offset === 0) return { items, total: 0 }
    const counted = yield* sql<{ readonly total: number }>`SELECT count(*)::int AS total ${options.from}`
    return { items, total: counted[0]?.total ?? 0 }
  })

const CountRow = Schema.Struct({ workspace_id: WorkspaceId, count: Schema.Int })

/** Per-workspace counts from a statement answering `workspace_id, count` rows (a workspace without any absent). */
export const countsOf = (
  statement: Effect.Effect<ReadonlyArray<unknown>, SqlError.SqlError>
): Effect.Effect<ReadonlyMap<WorkspaceId, number>> =>
  orDie(Effect.flatMap(statement, Schema.decodeUnknown(Schema.Array(CountRow)))).pipe(
    Effect.map((rows) => new Map(rows.map((row) => [row.workspace_id, row.count])))
  )
