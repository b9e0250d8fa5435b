/** The two log formats (packages/http/src/Logging.ts) and the level and format settings. */
import { Logging } from "@convene/http"
import { Cause, ConfigProvider, Effect, Either, Logger, LogLevel } from "effect"
import { describe, expect, it } from "vitest"

const capture = (format: Logging.LogFormat, log: Effect.Effect<void>) => {
  const lines: Array<string> = []
  Effect.runSync(log.pipe(Effect.provide(Logger.replace(Logger.defaultLogger, Logging.collecting(format, lines)))))
  return lines
}

describe("log lines", () => {
  it("json: time, level, msg and the annotations, flat, on one line; an error's cause in `error`", () => {
    const [info, error] = capture(
      "json",
      Effect.gen(function*() {
        yield* Effect.logInfo("request").pipe(Effect.annotateLogs({ status: 200, route: "/v1/meetings/:id" }))
        yield* Effect.logError("request", Cause.die(new Error("boom"))).pipe(Effect.annotateLogs({ status: 500 }))
      })
    )
    expect(info).not.toContain("\n")
    const parsed = JSON.parse(info!) as Record<string, unknown>
    expect(Object.keys(parsed)).toEqual(["time", "level", "msg", "status", "route"])
    expect(parsed).toMatchObject({ level: "info", msg: "request", status: 200, route: "/v1/meetings/:id" })
    expect(new Date(String(parsed.time)).toISOString()).toBe(parsed.time)
    const failed = JSON.parse(error!) as Record<string, unknown>
    expect(failed).toMatchObject({ level: "error", status: 500 })
    expect(String(failed.error)).toContain("boom")
  })

  it("json: warnings are `warn`", () => {
    const [line] = capture("json", Effect.logWarning("slow"))
    expect(JSON.parse(line!)).toMatchObject({ level: "warn", msg: "slow" })
  })

  it("pretty: time, level, message and key=value, quoting values with spaces; the cause below", () => {
    const [line, error] = capture(
      "pretty",
      Effect.gen(function*() {
        yield* Effect.logInfo("Convene listening").pipe(Effect.annotateLogs({ store: "memory (nothing persists)", port: 8080 }))
        yield* Effect.logError("request", Cause.die(new Error("boom")))
      })
    )
    expect(line).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO  Convene listening store="memory \(nothing persists\)" port=8080$/)
    expect(error!.split("\n")[0]).toMatch(/ ERROR request$/)
    expect(error).toContain("boom")
  })
})

describe("settings", () => {
  const read = (map: Record<string, string>) =>
    Effect.runSync(Effect.either(Effect.withConfigProvider(Logging.logConfig, ConfigProvider.fromMap(new Map(Object.entries(map))))))

  it("CONVENE_LOG_LEVEL takes debug, info, warn, error, none in any case", () => {
    expect(Either.map(read({ CONVENE_LOG_LEVEL: "WARN", CONVENE_LOG_FORMAT: "json" }), (c) => c.level)).toEqual(
      Either.right(LogLevel.Warning)
    )
    expect(Either.map(read({ CONVENE_LOG_LEVEL: "none", CONVENE_LOG_FORMAT: "json" }), (c) => c.level)).toEqual(
      Either.right(LogLevel.None)
    )
    expect(Either.isLeft(read({ CONVENE_LOG_LEVEL: "loud" }))).toBe(true)
  })

  it("CONVENE_LOG_FORMAT is json or pretty", () => {
    expect(Either.map(read({ CONVENE_LOG_FORMAT: "pretty" }), (c) => c.format)).toEqual(Either.right("pretty"))
    expect(Either.isLeft(read({ CONVENE_LOG_FORMAT: "xml" }))).toBe(true)
  })
})
