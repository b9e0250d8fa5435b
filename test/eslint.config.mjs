// One lint configuration for the whole repository (kept under test/ so the top level holds only the
// entries the design card names). Run from the root: `pnpm lint`.
import tseslint from "typescript-eslint"

export default tseslint.config(
  { ignores: ["**/dist/**", "**/node_modules/**", "**/.convene/**"] },
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts"],
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "no-restricted-imports": ["error", {
        paths: [
          { name: "@effect/schema", message: "Use `import { Schema } from \"effect\"`." }
        ],
        patterns: [
          { group: ["@effect/schema/*"], message: "Use `import { Schema } from \"effect\"`." },
          { group: ["effect/*"], message: "One import style: `import { Effect, Layer, Schema } from \"effect\"`." }
        ]
      }]
    }
  },
  {
    // The packages' sources import @effect/platform, platform-node, experimental and sql by module, not through their
    // index: an index loads every module of its package, and @effect/platform's holds the Scalar and Swagger UI
    // bundles as strings, about 20 MB of heap a server never uses (it serves its own; docs/benchmarks.md).
    files: ["packages/*/src/**/*.ts"],
    ignores: ["packages/core/src/**"],
    rules: {
      "no-restricted-imports": ["error", {
        paths: [
          { name: "@effect/schema", message: "Use `import { Schema } from \"effect\"`." },
          ...["@effect/platform", "@effect/platform-node", "@effect/experimental", "@effect/sql", "@effect/sql-pg"].map((name) => ({
            name,
            allowTypeImports: true,
            message: `Import the module: \`import * as HttpApiBuilder from "${name}/HttpApiBuilder"\` (the index loads every module).`
          }))
        ],
        patterns: [
          { group: ["@effect/schema/*"], message: "Use `import { Schema } from \"effect\"`." },
          { group: ["effect/*"], message: "One import style: `import { Effect, Layer, Schema } from \"effect\"`." }
        ]
      }]
    }
  },
  {
    // Tests build values through the real constructors and schemas, never by casting past the types.
    files: ["test/**/*.ts", "packages/*/test/**/*.ts", "examples/**/*.ts"],
    rules: {
      "no-restricted-syntax": ["error", {
        selector: "TSAsExpression > TSNeverKeyword",
        message: "No `as never` in tests: build the value with its schema or constructor (e.g. MeetingId.make(...))."
      }]
    }
  },
  {
    files: ["packages/core/src/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        paths: [{ name: "@effect/schema", message: "Use `import { Schema } from \"effect\"`." }],
        patterns: [
          { group: ["effect/*"], message: "One import style: `import { Effect, Layer, Schema } from \"effect\"`." },
          { group: ["node:*", "@effect/platform*", "@effect/sql*", "pg", "fs", "http", "crypto", "@convene/*"], message: "The core reaches the world only through ports." }
        ]
      }]
    }
  }
)
