import { Effect } from "effect"
import { EmbeddedLive, program } from "./program.js"

const summary = await Effect.runPromise(program.pipe(Effect.provide(EmbeddedLive)))
console.log(JSON.stringify(summary, null, 2))
