/**
 * The core's operations are named spans (`Service.method`, STYLE: named spans), declared with `fn` instead of
 * `Effect.fn`. The difference is the cost when tracing is off: `Effect.fn` captures the call site and opens a
 * span on every call, and a span, even a no-op one when the tracer is disabled, copies the fiber's whole
 * Context (some sixty services in the server) to make itself the parent of what runs inside. `fn` reads the
 * fiber's tracer switch (`Layer.setTracerEnabled`, `Effect.withTracerEnabled`) at each call and runs the body
 * without any of that when it is off (docs/benchmarks.md measures both).
 */
import { Effect, FiberRef, type Tracer } from "effect"

type Body = (...args: Array<unknown>) => Effect.Effect<unknown, unknown, unknown>

/** `Effect.fn(name, options)`, with its span and call-site capture only where the tracer is enabled. */
export const fn = (name: string, options?: Tracer.SpanOptions): Effect.fn.Gen =>
  ((body: Body, ...pipeables: Array<Body>) => {
    const traced: Body = (Effect.fn(name, options) as unknown as (body: Body, ...pipeables: Array<Body>) => Body)(
      body,
      ...pipeables
    )
    const untraced: Body = (Effect.fnUntraced as unknown as (body: Body, ...pipeables: Array<Body>) => Body)(
      body,
      ...pipeables
    )
    const choose = function(this: unknown, ...args: Array<unknown>) {
      return Effect.withFiberRuntime<unknown, unknown, unknown>((fiber) =>
        fiber.getFiberRef(FiberRef.currentTracerEnabled) ? traced.apply(this, args) : untraced.apply(this, args)
      )
    }
    return Object.defineProperty(choose, "length", { value: body.length, configurable: true })
  }) as unknown as Effect.fn.Gen

/** `Effect.withSpan(name, options)` (pipeable), opening the span only where the tracer is enabled. */
export const withSpan = (name: string, options?: Tracer.SpanOptions) =>
<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiberRuntime<A, E, R>((fiber) =>
    fiber.getFiberRef(FiberRef.currentTracerEnabled) ? Effect.withSpan(self, name, options) : self
  )
