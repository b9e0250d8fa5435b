// `pnpm bench:context`: what meeting context uploads cost the rest of the server. The compiled server (memory store,
// default configuration but for the setting compared) is sent BENCH_UPLOADS uploads of ~4.9 MiB of text dense with
// personal data (an e-mail address and a phone number every line, the scrubber's worst case), one after another,
// while one client reads a meeting in a loop. Runs once with the default (CONVENE_CONTEXT_WORKERS=1: uploads are
// prepared in a worker process) and once with CONVENE_CONTEXT_WORKERS=0 (on the main thread). Prints one JSON line
// per run: each upload's duration, and the reads' latency while the uploads ran (p50, p99, max) and how many there were.
// Options (env): BENCH_UPLOADS=4.
import { spawn } from "node:child_process"
import { randomUUID } from "node:crypto"
import { once } from "node:events"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { caller, freePort, provision, waitReady } from "./support.mjs"

const root = fileURLToPath(new URL("..", import.meta.url))
const uploads = Number(process.env.BENCH_UPLOADS ?? "4")
const OPERATOR = randomUUID()

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))]

const line = (i) => `Line ${i}: call Ann on +44 20 7946 ${String(1000 + (i % 9000))} or write to ann${i}@example.com today.\n`
let document = ""
for (let i = 0; document.length < 4.9 * 1024 * 1024; i++) document += line(i)

const run = async (workers) => {
  const port = await freePort()
  const child = spawn(process.execPath, [join(root, "packages/http/dist/main.js")], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: "127.0.0.1",
      CONVENE_STORE: "memory",
      CONVENE_OPERATOR_TOKEN: OPERATOR,
      CONVENE_RATE_LIMITS: "off",
      ...(workers === undefined ? {} : { CONVENE_CONTEXT_WORKERS: String(workers) })
    },
    stdio: ["ignore", "ignore", "pipe"]
  })
  let output = ""
  child.stderr.on("data", (chunk) => (output = (output + chunk).slice(-8192)))
  const url = `http://127.0.0.1:${port}`
  try {
    await waitReady(url, child, () => output)
    const call = caller(url)
    const { token } = await provision(call, OPERATOR, ["meetings:read", "meetings:write"])
    const meeting = await call("POST", "/v1/meetings", token, { title: "Bench" })
    const upload = async () => {
      const form = new FormData()
      form.set("file", new Blob([document], { type: "text/plain" }), "notes.txt")
      const started = performance.now()
      const response = await fetch(`${url}/v1/meetings/${meeting.id}/context`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}` },
        body: form
      })
      await response.text()
      if (response.status !== 201) throw new Error(`upload: ${response.status}`)
      return performance.now() - started
    }
    // One upload first: the worker process starts on demand, and the first upload pays for it.
    const first = await upload()
    let uploading = true
    const reads = []
    const reader = (async () => {
      while (uploading) {
        const started = performance.now()
        await call("GET", `/v1/meetings/${meeting.id}`, token)
        reads.push(performance.now() - started)
      }
    })()
    const durations = []
    for (let i = 0; i < uploads; i++) durations.push(await upload())
    uploading = false
    await reader
    reads.sort((a, b) => a - b)
    const ms = (value) => Math.round(value)
    return {
      context_workers: workers ?? "default (1)",
      upload_mib: Number((document.length / 1024 / 1024).toFixed(1)),
      first_upload_ms: ms(first),
      upload_ms: durations.map(ms),
      reads_during_uploads: reads.length,
      read_p50_ms: ms(percentile(reads, 50)),
      read_p99_ms: ms(percentile(reads, 99)),
      read_max_ms: ms(reads[reads.length - 1])
    }
  } finally {
    child.kill("SIGTERM")
    await once(child, "exit").catch(() => {})
  }
}

for (const workers of [undefined, 0]) console.log(JSON.stringify(await run(workers)))
