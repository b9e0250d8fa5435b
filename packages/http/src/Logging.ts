/**
 * How the server writes its logs: one line per event on standard output, JSON for machines (the default when
 * the output is not a terminal) or a short line for people (`pretty`, the default on a terminal).
 *
 * A JSON line is `{"time","level","msg", ...fields}`: the fields are the log's annotations, flat (an access
 * line has request_id, method, route, status, duration_ms, credential_kind, credential_id, workspace_id), and
 * `error` holds the cause of an error line. Nothing else is added, so nothing reaches the log that the code
 * did not put there on purpose: no token, password, secret or body is ever annotated.
 */
import { Cause, Config, Inspectable, Layer, Logger, LogLevel } from "effect"

export type LogFormat = "json" | "pretty"

export interface LogConfig {
  readonly format: LogFormat
  readonly level: LogLevel.LogLevel
}

const levels: Record<string, LogLevel.LogLevel> = {
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warn: LogLevel.Warning,
  warning: LogLevel.Warning,
  error: LogLevel.Error,
  none: LogLevel.None
}

/** CONVENE_LOG_FORMAT (json or pretty; by default pretty on a terminal, else json), CONVENE_LOG_LEVEL (info). */
export const logConfig: Config.Config<LogConfig> = Config.all({
  format: Config.literal("json", "pretty")("CONVENE_LOG_FORMAT").pipe(
    Config.withDefault<LogFormat>(process.stdout.isTTY === true ? "pretty" : "json")
  ),
  level: Config.string("CONVENE_LOG_LEVEL").pipe(
    Config.withDefault("info"),
    Config.validate({
      message: "must be one of debug, info, warn, error, none",
      validation: (name) => Object.hasOwn(levels, name.toLowerCase())
    }),
    Config.map((name) => levels[name.toLowerCase()] ?? LogLevel.Info)
  )
})

/** A log message as text: strings as they are, anything else through Effect's own formatting. */
const textOf = (message: unknown): string => {
  const parts = Array.isArray(message) ? message : [message]
  return parts.map((part) => (typeof part === "string" ? part : Inspectable.toStringUnknown(part))).join(" ")
}

const levelName = (level: LogLevel.LogLevel) => (level._tag === "Warning" ? "warn" : level.label.toLowerCase())

/** `{"time","level","msg",...annotations,"error"?}` on one line. */
export const jsonLogger = Logger.make<unknown, string>(({ annotations, cause, date, logLevel, message }) => {
  const line: Record<string, unknown> = { time: date.toISOString(), level: levelName(logLevel), msg: textOf(message) }
  for (const [key, value] of annotations) line[key] = value
  if (!Cause.isEmpty(cause)) line.error = Cause.pretty(cause, { renderErrorCause: true })
  return JSON.stringify(line)
})

/** `hh:mm:ss.mmm LEVEL msg key=value ...`, then the cause of an error on the lines below. */
export const prettyLogger = Logger.make<unknown, string>(({ annotations, cause, date, logLevel, message }) => {
  const fields = [...annotations].map(([key, value]) =>
    `${key}=${typeof value === "string" && /^[^\s"=]*$/.test(value) ? value : JSON.stringify(value)}`
  )
  const head = [date.toISOString().slice(11, 23), levelName(logLevel).toUpperCase().padEnd(5), textOf(message), ...fields]
    .join(" ")
  return Cause.isEmpty(cause) ? head : `${head}\n${Cause.pretty(cause, { renderErrorCause: true })}`
})

/**
 * Standard output, written once per turn of the event loop: the lines logged meanwhile (an access line per request
 * answered) go out in one write instead of one system call each. Node writes to files and pipes synchronously, so a
 * consumer that stops reading holds the server back rather than letting the lines pile up in memory; lines still
 * waiting when the process exits are written then.
 */
class StdoutLines {
  private pending: Array<string> = []
  private scheduled = false

  constructor() {
    process.once("exit", () => this.flush())
  }

  readonly write = (line: string): void => {
    this.pending.push(line)
    if (this.scheduled) return
    this.scheduled = true
    setImmediate(this.flush)
  }

  readonly flush = (): void => {
    this.scheduled = false
    if (this.pending.length === 0) return
    const text = this.pending.join("")
    this.pending = []
    process.stdout.write(text)
  }
}

let stdout: StdoutLines | undefined

/** Writes each line to standard output (see `StdoutLines`). */
const toStdout = (logger: Logger.Logger<unknown, string>) =>
  Logger.map(logger, (line) => {
    stdout ??= new StdoutLines()
    stdout.write(`${line}\n`)
  })

/** The logger for a configuration, replacing Effect's default one, with its minimum level. */
export const layer = (config: LogConfig): Layer.Layer<never> =>
  Layer.merge(
    Logger.replace(Logger.defaultLogger, toStdout(config.format === "json" ? jsonLogger : prettyLogger)),
    Logger.minimumLogLevel(config.level)
  )

/** For tests: the lines a logger would write, in order. */
export const collecting = (format: LogFormat, lines: Array<string>): Logger.Logger<unknown, void> =>
  Logger.map(format === "json" ? jsonLogger : prettyLogger, (line) => {
    lines.push(line)
  })
