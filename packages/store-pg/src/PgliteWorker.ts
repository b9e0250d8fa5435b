/**
 * The script of PGlite's worker thread (see `PgliteClient`, `thread: "worker"`): opens PGlite on the data directory
 * the main thread names (and has locked), then answers each request with PGlite's result or error.
 *
 * One message per call, `{ id, op, sql, params?, rowMode? }`, answered by `{ id, ok: true, result }` or
 * `{ id, ok: false, error }`; the first message, id 0, tells whether PGlite opened. Results cross as a structured
 * clone (Date, Uint8Array, bigint, arrays, parsed jsonb stay what they are); an error crosses as its own properties
 * (PostgreSQL's `code`, `constraint`, `detail`…) with its name, message and stack, for the main thread to rebuild.
 *
 * The module does nothing unless it is the entry of a worker started with `workerData.pgliteWorker`.
 */
import { PGlite } from "@electric-sql/pglite"
import { isMainThread, type MessagePort, parentPort, workerData } from "node:worker_threads"

export type Request =
  | {
    readonly id: number
    readonly op: "query"
    readonly sql: string
    readonly params: ReadonlyArray<unknown>
    readonly rowMode?: "array"
  }
  | { readonly id: number; readonly op: "exec"; readonly sql: string }
  | { readonly id: number; readonly op: "close" }

export type Reply =
  | { readonly id: number; readonly ok: true; readonly result?: unknown }
  | { readonly id: number; readonly ok: false; readonly error: SerializedError }

/**
 * An error as it crosses: its own enumerable properties that a structured clone can carry (`fields`), and its name,
 * message and stack.
 */
export interface SerializedError {
  readonly name: string
  readonly message: string
  readonly stack?: string
  readonly fields: Readonly<Record<string, unknown>>
}

/** The id of the worker's first message: PGlite is open, or could not be opened. */
export const READY = 0

/** What the main thread gives the worker. */
export interface WorkerData {
  readonly pgliteWorker: true
  /** An absolute path, locked by the main thread. */
  readonly dataDir: string
}

const isWorkerData = (data: unknown): data is WorkerData =>
  typeof data === "object" && data !== null && (data as { pgliteWorker?: unknown }).pgliteWorker === true

const cloneable = (value: unknown): boolean => {
  if (typeof value === "function" || typeof value === "symbol") return false
  if (typeof value !== "object" || value === null) return true
  try {
    structuredClone(value)
    return true
  } catch {
    return false
  }
}

const serializeError = (error: unknown): SerializedError => {
  if (!(error instanceof Error)) return { name: "Error", message: String(error), fields: {} }
  const fields: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(error)) {
    if (cloneable(value)) fields[key] = value
  }
  return { name: error.name, message: error.message, ...(error.stack === undefined ? {} : { stack: error.stack }), fields }
}

const serve = async (port: MessagePort, data: WorkerData) => {
  let db: PGlite
  try {
    db = await PGlite.create({ dataDir: data.dataDir })
  } catch (error) {
    port.postMessage({ id: READY, ok: false, error: serializeError(error) } satisfies Reply)
    return
  }
  const answer = (id: number, run: () => Promise<unknown>, then?: () => void) =>
    run().then(
      (result) => port.postMessage({ id, ok: true, result } satisfies Reply),
      (error: unknown) => port.postMessage({ id, ok: false, error: serializeError(error) } satisfies Reply)
    ).finally(then)
  port.on("message", (request: Request) => {
    switch (request.op) {
      case "query":
        return answer(request.id, () =>
          db.query(
            request.sql,
            request.params as Array<unknown>,
            request.rowMode === undefined ? undefined : { rowMode: request.rowMode }
          ))
      case "exec":
        return answer(request.id, () => db.exec(request.sql))
      case "close":
        // Answered, the port closes and the thread ends (the main thread terminates it too).
        return answer(request.id, () => db.close(), () => port.close())
    }
  })
  port.postMessage({ id: READY, ok: true } satisfies Reply)
}

if (!isMainThread && parentPort !== null && isWorkerData(workerData)) void serve(parentPort, workerData)
