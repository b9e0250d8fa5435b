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
