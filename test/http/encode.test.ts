/**
 * The core's encoder without checks (core/shared/Encode.ts) answers what `Schema.encodeSync` answers, for generated
 * values of the success schema of every endpoint of the API (lists of 100-odd records included), so an answer
 * encoded the fast way is byte for byte the one the schema would give.
 */
import { Encode, Meeting, Pagination } from "@convene/core"
import { Api } from "@convene/http"
import { HttpApi } from "@effect/platform"
import { Arbitrary, DateTime, FastCheck, Schema } from "effect"
import { describe, expect, it } from "vitest"

/** Every distinct success schema of the API's endpoints, by its endpoint's name. */
const successSchemas = (): ReadonlyArray<readonly [string, Schema.Schema.Any]> => {
  const found = new Map<Schema.Schema.Any, string>()
  HttpApi.reflect(Api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint, successes }) => {
      for (const [, { ast }] of successes) {
        if (ast._tag === "None") continue
        const schema = Schema.make(ast.value)
        if (!found.has(schema)) found.set(schema, `${endpoint.method} ${endpoint.path}`)
      }
    }
  })
  return [...found].map(([schema, name]) => [name, schema] as const)
}

describe("encoding the core's records without checks", () => {
  const schemas = successSchemas()

  it("covers the API's answers", () => {
    expect(schemas.length).toBeGreaterThan(40)
  })

  it("skips the checks: a page of meetings is encoded field by field, not validated again", () => {
    const at = DateTime.unsafeMake("2026-12-01T09:00:00Z")
    const unchecked = new Meeting({
      id: "not-a-uuid",
      workspace_id: "neither",
      title: "Made without checks",
      status: "scheduled",
      start_time: at,
      end_time: null,
      is_instant: false,
      detail_level: "standard",
      template_id: null,
      owner_user_id: null,
      created_at: at,
      updated_at: at
    } as unknown as Meeting, { disableValidation: true })
    const page = { items: [unchecked], total: 1, limit: 20, offset: 0 }
    const List = Pagination.ListOf(Meeting)
    expect(() => Schema.encodeSync(List)(page)).toThrow()
    expect(Encode.encoderOf(List)(page)).toEqual({
      items: [{ ...unchecked, start_time: "2026-12-01T09:00:00.000Z", created_at: "2026-12-01T09:00:00.000Z", updated_at: "2026-12-01T09:00:00.000Z" }],
      total: 1,
      limit: 20,
      offset: 0
    })
  })

  for (const [name, schema] of schemas) {
    it(`answers what Schema.encode answers: ${name}`, () => {
      const encode = Encode.encoderOf(schema)
      const checked = Schema.encodeSync(schema as Schema.Schema<unknown, unknown, never>)
      FastCheck.assert(
        FastCheck.property(Arbitrary.make(schema as Schema.Schema<unknown, unknown, never>), (value) => {
          expect(JSON.stringify(encode(value))).toBe(JSON.stringify(checked(value)))
        }),
        { numRuns: 50 }
      )
    })
  }
})
