/**
 * limit/offset pagination, exactly as the contract's Limits table says: `limit` defaults to 20 (25 for
 * calendar events), values above 100 become 100, missing or non-positive values become the default;
 * `offset` defaults to 0 and a negative offset reads as 0; an offset past the end gives an empty page.
 */
import { Schema } from "effect"

export const MAX_LIMIT = 100
export const DEFAULT_LIMIT = 20

/** What the caller asked for; anything the rules accept. */
export interface PageRequest {
  readonly limit?: number | undefined
  readonly offset?: number | undefined
}

/** What the store is asked for, after clamping. */
export interface Page {
  readonly limit: number
  readonly offset: number
}

export const clamp = (request: PageRequest, defaultLimit: number = DEFAULT_LIMIT): Page => {
  const limit = request.limit === undefined || !Number.isFinite(request.limit) || request.limit < 1
    ? defaultLimit
    : Math.min(Math.floor(request.limit), MAX_LIMIT)
  const offset = request.offset === undefined || !Number.isFinite(request.offset) || request.offset < 0
    ? 0
    : Math.floor(request.offset)
  return { limit, offset }
}

/** A page of rows as a store returns it. */
export interface Slice<A> {
  readonly items: ReadonlyArray<A>
  readonly total: number
}

/** The list envelope of every list endpoint. */
export const ListOf = <A, I, R>(item: Schema.Schema<A, I, R>) =>
  Schema.Struct({
    items: Schema.Array(item),
    total: Schema.Int,
    limit: Schema.Int,
    offset: Schema.Int
  })

export interface List<A> {
  readonly items: ReadonlyArray<A>
  readonly total: number
  readonly limit: number
  readonly offset: number
}

export const toList = <A>(slice: Slice<A>, page: Page): List<A> => ({
  items: slice.items,
  total: slice.total,
  limit: page.limit,
  offset: page.offset
})

/** Cuts one page out of an in-memory array (used by adapters that hold rows in memory and by core). */
export const sliceOf = <A>(all: ReadonlyArray<A>, page: Page): Slice<A> => ({
  items: all.slice(page.offset, page.offset + page.limit),
  total: all.length
})
