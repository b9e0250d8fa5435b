/** Text fields with the length rules the API applies to every title, name and description. */
import { Schema } from "effect"

/** Trimmed, non-empty, at most `max` characters. */
export const Title = (max: number) =>
  Schema.Trim.pipe(
    Schema.minLength(1, { message: () => "must not be empty" }),
    Schema.maxLength(max, { message: () => `must be at most ${max} characters` })
  )

/** Free text, at most `max` characters. */
export const LongText = (max: number) =>
  Schema.String.pipe(Schema.maxLength(max, { message: () => `must be at most ${max} characters` }))

export const Email = Schema.Trim.pipe(
  Schema.pattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, { message: () => "must be an e-mail address" }),
  Schema.maxLength(320, { message: () => "must be at most 320 characters" }),
).annotations({ identifier: "Email", jsonSchema: { type: "string", format: "email" } })
export type Email = typeof Email.Type

/** E-mail addresses compare case-insensitively. */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase()
