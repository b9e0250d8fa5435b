/**
 * Ids derived from a name instead of drawn at random: the same name gives the same id everywhere (every server, every
 * store, every run), so a thing identified by what it is (a toolkit's meeting template by its toolkit and key, an
 * event derived from another) keeps one id without storing it.
 */
import { Effect } from "effect"
import { Crypto } from "../ports/Crypto.js"

/**
 * The UUID derived from `name`: the first 128 bits of SHA-256 of `name`, laid out as a UUID of version 8 (RFC 9562's
 * custom version) with the RFC variant. Callers prefix the name with what it identifies (`meeting_template:`,
 * `workflow_template:`, an event type) so that ids of different things never collide.
 */
export const derivedUuid = (name: string): Effect.Effect<string, never, Crypto> =>
  Effect.flatMap(Crypto, (crypto) =>
    Effect.map(crypto.sha256(name), (hex) => {
      const variant = ((Number.parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16)
      return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`
    }))
