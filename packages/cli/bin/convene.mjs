#!/usr/bin/env node
// The `convene` command: the compiled CLI (`pnpm build` writes ../dist). On Node 22.1 and later, Node keeps the
// compiled code of the modules it loads in its compile cache, so every later command starts faster.
import module from "node:module"

module.enableCompileCache?.()
await import("../dist/main.js")
