import { defineConfig } from "vitest/config"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))

export default defineConfig({
  root,
  resolve: { conditions: ["@convene/source"] },
  ssr: { resolve: { conditions: ["@convene/source"] } },
  test: {
    include: ["test/**/*.test.ts", "packages/*/test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    sequence: { concurrent: false }
  }
})
