import { layer } from "@convene/store-memory"
import { runContractSuites } from "./contract/index.js"

runContractSuites("memory", layer)
