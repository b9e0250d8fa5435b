/** `pnpm start`: the Convene server as a process (Serve.ts; `convene serve` runs the same program). */
import { runServer } from "./Serve.js"

runServer()
