/**
 * PgTransactor on the PostgreSQL server: a transaction that PostgreSQL ends to break a deadlock runs again, so two
 * writers that take the same rows in opposite orders both commit (and each change is made once).
 */
import { Transactor } from "@convene/core"
import { SqlClient } from "@effect/sql"
import { describe, expect, it } from "@effect/vitest"
import { Context, Deferred, Effect, Layer } from "effect"
import { clientPg } from "../src/index.js"
import * as PgTransactor from "../src/PgTransactor.js"
import { serverDatabase } from "./fixtures.js"

describe("PgTransactor", () => {
  it.scopedLive("runs a deadlock's victim again: both writers commit, each change once", () =>
    Effect.gen(function*() {
      const url = yield* serverDatabase
      const context = yield* Layer.build(PgTransactor.layer.pipe(Layer.provideMerge(clientPg({ url, maxConnections: 4 }))))
      const sql = Context.get(context, SqlClient.SqlClient)
      const { withTransaction } = Context.get(context, Transactor)
      yield* sql`CREATE TABLE pairs (id int PRIMARY KEY, n int NOT NULL)`
      yield* sql`INSERT INTO pairs VALUES (1, 0), (2, 0)`
      const runs = { a: 0, b: 0 }
      const holding = { a: yield* Deferred.make<void>(), b: yield* Deferred.make<void>() }
      // On its first run each writer takes its first row and waits until the other holds its own: a deadlock, which
      // PostgreSQL breaks (after deadlock_timeout, 1 s) by ending one of them; that one runs again, after a pause on
      // the live clock, and takes both.
      const writer = (self: "a" | "b", other: "a" | "b", first: number, second: number) =>
        withTransaction(Effect.gen(function*() {
          runs[self] += 1
          yield* sql`UPDATE pairs SET n = n + 1 WHERE id = ${first}`
          if (runs[self] === 1) {
            yield* Deferred.succeed(holding[self], undefined)
            yield* Deferred.await(holding[other])
          }
          yield* sql`UPDATE pairs SET n = n + 1 WHERE id = ${second}`
        })).pipe(Effect.orDie)
      yield* Effect.all([writer("a", "b", 1, 2), writer("b", "a", 2, 1)], { concurrency: "unbounded" })
      expect(runs.a + runs.b).toBe(3)
      expect(yield* sql<{ id: number; n: number }>`SELECT id, n FROM pairs ORDER BY id`).toEqual([{ id: 1, n: 2 }, { id: 2, n: 2 }])
    }), 30_000)
})
