/**
 * PII scrubbing of meeting context, pure and deterministic: the same text always scrubs to the same result, and
 * only the scrubbed text is ever stored, served or put into a prompt. Each detector replaces what it finds with a
 * typed placeholder. They run in the order below, each on the output of the one before (a placeholder holds no
 * digit, no `@` and no `:`, so no later detector matches inside one), and run again until nothing changes:
 *
 * - `[SECRET]` tokens and keys: Convene's own credentials (`svc_<kind>_v1_...`: access, refresh, short-lived,
 *   personal access tokens, workspace API keys, sessions, registration tokens; webhook secrets `whsec_...`),
 *   GitHub (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`), AWS access key ids (`AKIA`/`ASIA` + 16),
 *   Slack (`xoxa-`, `xoxb-`, `xoxp-`, `xoxr-`, `xoxs-`, `xapp-`), Stripe (`sk_live_`, `sk_test_`, `rk_live_`,
 *   `rk_test_`, `whsec_`), OpenAI-style `sk-` keys, Google API keys (`AIza` + 35), JSON Web Tokens
 *   (`eyJ...`.`eyJ...`.signature) and PEM private key blocks.
 * - `[EMAIL]` e-mail addresses: local part, `@`, a domain with a dot and a top-level domain of 2+ letters.
 * - `[IBAN]` international bank account numbers, grouped or not: a known country code, the length that country
 *   uses, and the mod-97 check digits (ISO 13616).
 * - `[CARD]` payment card numbers: 13 to 19 digits (in groups separated by single spaces or hyphens), a known
 *   issuer prefix (Visa, Mastercard, American Express, Discover, JCB, Diners Club, UnionPay, Maestro) and the Luhn
 *   check digit.
 * - `[NATIONAL_ID]` national identity numbers: US Social Security numbers written `123-45-6789` or
 *   `123 45 6789` (excluding numbers the SSA never issues: area 000, 666, 900-999, group 00, serial 0000), UK
 *   National Insurance numbers (`AB 12 34 56 C`, prefixes HMRC never allocates excluded), Canadian Social
 *   Insurance numbers written `123-456-782` or `123 456 782` (Luhn-checked) and Spanish DNI/NIE numbers
 *   (`12345678Z`, `X1234567L`; the control letter checked).
 * - `[IP]` IP addresses: IPv4 dotted quads (each part 0-255, not part of a longer dotted number such as a version
 *   `1.2.3.4.5` or a word, and not right after "version", "release" or "build") and IPv6 addresses (full, `::`-compressed, with an embedded IPv4 tail; validated, so times and
 *   MAC addresses are not taken).
 * - `[PHONE]` telephone numbers that libphonenumber-js (`findPhoneNumbersInText`, full metadata) confirms as valid,
 *   among candidates of three written forms: international numbers (`+44 20 7946 0958`) of any country, national
 *   numbers of the US and Canada written 3-3-4 (`(415) 555-2671`, `1-800-555-0199`) or as 10 digits, and UK
 *   national numbers written with their trunk 0 (`020 7946 0958`).
 *
 * Not detected: names, postal addresses, dates of birth, and national ids of other formats. The tests measure
 * each detector on a labelled corpus (test/core/Scrubber.test.ts).
 */
import { Duration, Effect } from "effect"
import { findPhoneNumbersInText } from "libphonenumber-js/max"

export type PiiKind = "SECRET" | "EMAIL" | "IBAN" | "CARD" | "NATIONAL_ID" | "IP" | "PHONE"

export const placeholder = (kind: PiiKind): string => `[${kind}]`

/** What a detector found: [start, end) in the text it was given. */
interface Span {
  readonly start: number
  readonly end: number
}

export interface Detector {
  readonly kind: PiiKind
  readonly find: (text: string) => ReadonlyArray<Span>
}

const matchesOf = (pattern: RegExp, text: string, accept: (match: RegExpExecArray) => boolean = () => true): Array<Span> => {
  const found: Array<Span> = []
  for (const match of text.matchAll(pattern)) {
    if (accept(match)) found.push({ start: match.index, end: match.index + match[0].length })
  }
  return found
}

// ---- secrets

const secretPatterns: ReadonlyArray<RegExp> = [
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
  /(?<![A-Za-z0-9_])svc_[a-z]{2,4}_v\d+_[A-Za-z0-9_-]{16,}/g,
  /(?<![A-Za-z0-9_])whsec_[A-Za-z0-9_+/=-]{16,}/g,
  /(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{30,}/g,
  /(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{40,}/g,
  /(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])/g,
  /(?<![A-Za-z0-9])xox[abprs]-[A-Za-z0-9-]{10,}/g,
  /(?<![A-Za-z0-9])xapp-[A-Za-z0-9-]{10,}/g,
  /(?<![A-Za-z0-9_])[sr]k_(?:live|test)_[A-Za-z0-9]{10,}/g,
  /(?<![A-Za-z0-9_-])sk-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_-]{32,}/g,
  /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])/g,
  /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}/g
]

const secrets: Detector = {
  kind: "SECRET",
  find: (text) => secretPatterns.flatMap((pattern) => matchesOf(pattern, text))
}

// ---- e-mail

const email: Detector = {
  kind: "EMAIL",
  find: (text) =>
    matchesOf(
      /(?<![\p{L}\p{N}._%+-])[\p{L}\p{N}_%+-]+(?:\.[\p{L}\p{N}_%+-]+)*@(?:[\p{L}\p{N}](?:[\p{L}\p{N}-]*[\p{L}\p{N}])?\.)+\p{L}{2,}(?![\p{L}\p{N}-])/gu,
      text
    )
}

// ---- IBAN

/** IBAN lengths by country (SWIFT IBAN registry). */
const ibanLengths: Readonly<Record<string, number>> = {
  AD: 24, AE: 23, AL: 28, AT: 20, AZ: 28, BA: 20, BE: 16, BG: 22, BH: 22, BR: 29, BY: 28, CH: 21, CR: 22, CY: 28,
  CZ: 24, DE: 22, DK: 18, DO: 28, EE: 20, EG: 29, ES: 24, FI: 18, FO: 18, FR: 27, GB: 22, GE: 22, GI: 23, GL: 18,
  GR: 27, GT: 28, HR: 21, HU: 28, IE: 22, IL: 23, IQ: 23, IS: 26, IT: 27, JO: 30, KW: 30, KZ: 20, LB: 28, LC: 32,
  LI: 21, LT: 20, LU: 20, LV: 21, MC: 27, MD: 24, ME: 22, MK: 19, MR: 27, MT: 31, MU: 30, NL: 18, NO: 15, PK: 24,
  PL: 28, PS: 29, PT: 25, QA: 29, RO: 24, RS: 22, SA: 24, SC: 31, SE: 24, SI: 19, SK: 24, SM: 27, ST: 25, SV: 28,
  TL: 23, TN: 24, TR: 26, UA: 29, VA: 22, VG: 24, XK: 20
}

/** The ISO 7064 mod-97-10 check of an IBAN without separators. */
export const ibanChecks = (iban: string): boolean => {
  const rearranged = iban.slice(4) + iban.slice(0, 4)
  let remainder = 0
  for (const char of rearranged) {
    const value = char >= "A" && char <= "Z" ? String(char.charCodeAt(0) - 55) : char
    for (const digit of value) remainder = (remainder * 10 + Number(digit)) % 97
  }
  return remainder === 1
}

const iban: Detector = {
  kind: "IBAN",
  find: (text) =>
    matchesOf(/(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?:[ -]?[A-Z0-9]){11,30}(?![A-Za-z0-9])/g, text).flatMap((span) => {
      // The candidate may run into the following word's characters through a separator: try each length the
      // country allows, longest text first.
      const raw = text.slice(span.start, span.end)
      const length = ibanLengths[raw.slice(0, 2)]
      if (length === undefined) return []
      let compact = ""
      for (let i = 0; i < raw.length; i++) {
        if (raw[i] === " " || raw[i] === "-") continue
        compact += raw[i]
        if (compact.length === length) {
          const rest = raw.slice(i + 1)
          const endsHere = rest === "" || /^[ -]/.test(rest)
          return endsHere && ibanChecks(compact) ? [{ start: span.start, end: span.start + i + 1 }] : []
        }
      }
      return []
    })
}

// ---- payment cards

export const luhn = (digits: string): boolean => {
  let sum = 0
  for (let i = 0; i < digits.length; i++) {
    let digit = Number(digits[digits.length - 1 - i])
    if (i % 2 === 1) {
      digit *= 2
      if (digit > 9) digit -= 9
    }
    sum += digit
  }
  return sum % 10 === 0
}

const between = (value: number, low: number, high: number) => value >= low && value <= high

/** Whether the number starts as a card of a known issuer does, with a length that issuer uses. */
const knownIssuer = (digits: string): boolean => {
  const n = digits.length
  const p2 = Number(digits.slice(0, 2))
  const p3 = Number(digits.slice(0, 3))
  const p4 = Number(digits.slice(0, 4))
  const p6 = Number(digits.slice(0, 6))
  if (digits[0] === "4") return n === 13 || n === 16 || n === 19 // Visa
  if (between(p2, 51, 55) || between(p4, 2221, 2720)) return n === 16 // Mastercard
  if (p2 === 34 || p2 === 37) return n === 15 // American Express
  if (p4 === 6011 || p2 === 65 || between(p3, 644, 649) || between(p6, 622126, 622925)) return between(n, 16, 19) // Discover
  if (between(p4, 3528, 3589)) return between(n, 16, 19) // JCB
  if (between(p3, 300, 305) || p2 === 36 || p2 === 38 || p2 === 39 || p4 === 3095) return between(n, 14, 19) // Diners
  if (p2 === 62) return between(n, 16, 19) // UnionPay
  if (p2 === 50 || between(p2, 56, 58) || p2 === 63 || p2 === 67) return between(n, 12, 19) // Maestro
  return false
}

const card: Detector = {
  kind: "CARD",
  find: (text) =>
    matchesOf(/(?<![\d-]|\d[.,])\d(?:[ -]?\d){11,18}(?![\d-]|[.,]\d)/g, text, (match) => {
      const raw = match[0]
      // Separators, if any, are all the same character.
      if (raw.includes(" ") && raw.includes("-")) return false
      const digits = raw.replace(/[ -]/g, "")
      return knownIssuer(digits) && luhn(digits)
    })
}

// ---- national ids

const ssnValid = (area: string, group: string, serial: string) => {
  const a = Number(area)
  return a !== 0 && a !== 666 && a < 900 && group !== "00" && serial !== "0000"
}

const dniLetters = "TRWAGMYFPDXBNJZSQVHLCKE"

const dniValid = (body: string, letter: string) => {
  const numeric = body.replace(/^X/, "0").replace(/^Y/, "1").replace(/^Z/, "2")
  return dniLetters[Number(numeric) % 23] === letter
}

const ninoPrefixRefused = new Set(["BG", "GB", "NK", "KN", "TN", "NT", "ZZ"])

const nationalId: Detector = {
  kind: "NATIONAL_ID",
  find: (text) => [
    // US SSN: one separator, used twice.
    ...matchesOf(/(?<![\d-])(\d{3})([- ])(\d{2})\2(\d{4})(?![\d-])/g, text, (m) => ssnValid(m[1]!, m[3]!, m[4]!)),
    // UK NINO.
    ...matchesOf(
      /(?<![A-Za-z0-9])([A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]) ?\d{2} ?\d{2} ?\d{2} ?[A-D](?![A-Za-z0-9])/g,
      text,
      (m) => !ninoPrefixRefused.has(m[1]!)
    ),
    // Canadian SIN: 3-3-3 with one separator, Luhn-checked, never starting with 0 or 8.
    ...matchesOf(
      /(?<![\d-])([1-79]\d{2})([- ])(\d{3})\2(\d{3})(?![\d-])/g,
      text,
      (m) => luhn(m[1]! + m[3]! + m[4]!)
    ),
    // Spanish DNI (8 digits) and NIE (X, Y or Z and 7 digits), with the control letter.
    ...matchesOf(/(?<![A-Za-z0-9])([XYZ]\d{7}|\d{8})-?([A-HJ-NP-TV-Z])(?![A-Za-z0-9])/g, text, (m) => dniValid(m[1]!, m[2]!))
  ]
}

// ---- IP addresses

const octet = "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)"
// Not inside a longer dotted number or a word, and not right after "version", "release" or "build" (a
// four-part version number reads like an address).
const ipv4Pattern = new RegExp(
  `(?<![\\dA-Za-z.])(?<!(?:[Vv]ersion|[Rr]elease|[Bb]uild)\\s)${octet}(?:\\.${octet}){3}(?!\\.?\\d|[A-Za-z_])`,
  "g"
)

const ipv4Tail = new RegExp(`^${octet}(?:\\.${octet}){3}$`)

/** Whether `candidate` is an IPv6 address (RFC 4291 text forms, with an optional embedded IPv4 tail). */
export const isIpv6 = (candidate: string): boolean => {
  const halves = candidate.split("::")
  if (halves.length > 2) return false
  const groupsOf = (part: string) => (part === "" ? [] : part.split(":"))
  const head = groupsOf(halves[0]!)
  const tail = halves.length === 2 ? groupsOf(halves[1]!) : []
  const all = [...head, ...tail]
  let units = 0
  for (const [index, group] of all.entries()) {
    if (index === all.length - 1 && group.includes(".")) {
      if (!ipv4Tail.test(group)) return false
      units += 2
    } else if (/^[0-9A-Fa-f]{1,4}$/.test(group)) {
      units += 1
    } else {
      return false
    }
  }
  // A compressed form needs two groups at least ("::1", the loopback, aside), so `a[::2]` is not an address.
  return halves.length === 2 ? units <= 7 && (all.length >= 2 || candidate === "::1") : units === 8
}

const ip: Detector = {
  kind: "IP",
  find: (text) => [
    ...matchesOf(ipv4Pattern, text),
    ...matchesOf(/(?<![\w:.])(?:[0-9A-Fa-f]{0,4}:){2,7}(?:[0-9A-Fa-f]{1,4}|[\d.]{7,15})?(?![\w:])/g, text, (m) => {
      const candidate = m[0]
      // At least one group must be hex beyond what a time of day looks like, or the address is compressed.
      return isIpv6(candidate) && (candidate.includes("::") || candidate.split(":").length === 8)
    })
  ]
}

// ---- phone numbers

const dash = " .\\u2010-\\u2015-"

/**
 * The written forms read, each a cheap pattern that finds candidates, which libphonenumber-js then confirms
 * (`findPhoneNumbersInText` on the candidate with one character of context on each side, full metadata, valid
 * numbers only). Its matcher costs seconds a megabyte; run on candidates alone, a text of figures costs no more than
 * its candidates.
 * - international: `+` and the digits of a number in groups (any country);
 * - North American national numbers written 3-3-4 (area code in parentheses or not, a leading 1 allowed) or as 10
 *   digits, with area code and exchange from 2-9 (so `2024-000123`, an invoice number, is no candidate);
 * - UK national numbers written with their trunk 0.
 */
const phoneForms: ReadonlyArray<{
  readonly country: "US" | "GB"
  /** The calling code a national number must have (undefined: international, any). */
  readonly callingCode: string | undefined
  readonly candidates: RegExp
}> = [
  { country: "US", callingCode: undefined, candidates: /\+\(?\d[\d \t()./\u2010-\u2015-]{5,24}\d/g },
  {
    country: "US",
    callingCode: "1",
    candidates: new RegExp(
      `(?<![\\w+])(?:1[${dash}]?)?(?:\\([2-9]\\d{2}\\)|[2-9]\\d{2})[${dash}]?[2-9]\\d{2}[${dash}]?\\d{4}(?!\\d)`,
      "g"
    )
  },
  {
    country: "GB",
    callingCode: "44",
    candidates: new RegExp(`(?<![\\w+])\\(?0\\d{2,4}\\)?[${dash}]?\\d{3,4}[${dash}]?\\d{3,4}(?!\\d)`, "g")
  }
]

const phone: Detector = {
  kind: "PHONE",
  find: (text) =>
    phoneForms.flatMap(({ callingCode, candidates, country }) =>
      [...text.matchAll(candidates)].flatMap((candidate) => {
        const before = Math.max(0, candidate.index - 1)
        const slice = text.slice(before, Math.min(text.length, candidate.index + candidate[0].length + 1))
        return findPhoneNumbersInText(slice, { defaultCountry: country }).flatMap((found) => {
          const raw = slice.slice(found.startsAt, found.endsAt)
          // The match may take an opening parenthesis with it: "(+33 1 42 68 53 00)".
          const international = /^\(?\+/.test(raw)
          if (callingCode === undefined ? !international : international || found.number.countryCallingCode !== callingCode) {
            return []
          }
          return [{ start: before + found.startsAt, end: before + found.endsAt }]
        })
      })
    )
}

/** Every detector, in the order they run. */
export const detectors: ReadonlyArray<Detector> = [secrets, email, iban, card, nationalId, ip, phone]

/** Replaces what `detector` finds in `text` (overlapping finds are merged). */
export const applyDetector = (detector: Detector, text: string): string => {
  const spans = [...detector.find(text)].sort((a, b) => a.start - b.start || b.end - a.end)
  let out = ""
  let at = 0
  for (const span of spans) {
    if (span.end <= at) continue
    const start = Math.max(span.start, at)
    out += text.slice(at, start) + (start === span.start ? placeholder(detector.kind) : "")
    at = span.end
  }
  return out + text.slice(at)
}

/** One pass of every detector, in order. */
const pass = (text: string): string => detectors.reduce((current, detector) => applyDetector(detector, current), text)

/**
 * The text with every detector's finds replaced by their placeholders. The passes repeat until nothing changes: a
 * find can free another at its edge (an address glued to a number, `alice@example.com078-05-1120`, is an address
 * only once the number is gone), so scrubbed text scrubs to itself. A placeholder never takes part in a find, so
 * every pass that changes something consumes text and the repetition ends (the bound is only a guard).
 */
export const scrub = (text: string): string => {
  let current = text
  for (let passes = 0; passes < 16; passes++) {
    const next = pass(current)
    if (next === current) return next
    current = next
  }
  return current
}

/** The most text scrubbed in one go before other work gets a turn (64 Ki characters: a few milliseconds). */
export const sliceLength = 64 * 1024

/** Where a long line may be cut without cutting a value a detector looks for: after a sentence, else after a space. */
const sentenceEnd = /[.!?;] /g
const space = /\s/g

const lastMatchStart = (pattern: RegExp, text: string): number => {
  let start = -1
  pattern.lastIndex = 0
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) start = match.index
  return start
}

const lastMatchEnd = (pattern: RegExp, text: string): number => {
  let end = -1
  pattern.lastIndex = 0
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) end = match.index + match[0].length
  return end
}

/** The start of a private key block (the one value a detector finds across lines) and its end. */
const keyBegin = /-----BEGIN [A-Z ]*PRIVATE KEY-----/g
const keyEnd = "-----END "

/**
 * `text` cut into slices of at most `length` characters that join back into it: each cut after a line end when the
 * slice holds one (no value a detector finds spans lines, but for a private key block: a cut never falls inside one
 * that begins after the slice's start), else, inside a line longer than `length`, after a sentence's end, else after
 * white space, else at the length.
 */
export const slicesOf = (text: string, length: number = sliceLength): Array<string> => {
  const slices: Array<string> = []
  let at = 0
  while (text.length - at > length) {
    const window = text.slice(at, at + length)
    const newline = window.lastIndexOf("\n") + 1
    let cut = newline > 0 ? newline : [lastMatchEnd(sentenceEnd, window), lastMatchEnd(space, window)].find((end) => end > 0)
    // A key block opened before the cut and not closed before it: cut before the block instead, so the next slice
    // holds all of it (a block longer than a slice, far beyond any real key, is cut as any text is).
    const opened = lastMatchStart(keyBegin, window.slice(0, cut ?? length))
    if (opened > 0 && !window.slice(opened, cut ?? length).includes(keyEnd)) cut = opened
    const end = at + (cut ?? length)
    slices.push(text.slice(at, end))
    at = end
  }
  slices.push(text.slice(at))
  return slices
}

/** A turn for the host's other work (timers, I/O, other requests): a zero sleep, which the live clock runs as a timer. */
const giveWay = Effect.sleep(Duration.zero)

/**
 * `scrub` for text of any size without holding the thread: slice by slice (`slicesOf`), giving other work a turn
 * between slices, so that a large upload delays other requests by one slice at most, not by the seconds its whole
 * text takes. The result is `scrub` of each slice, which is `scrub(text)` but for a value a cut inside a line longer
 * than a slice would split.
 */
export const scrubInSlices = (text: string): Effect.Effect<string> =>
  Effect.gen(function*() {
    const slices = slicesOf(text)
    if (slices.length === 1) return scrub(text)
    let out = ""
    for (const slice of slices) {
      out += scrub(slice)
      yield* giveWay
    }
    return out
  })

/**
 * Joins texts for `scrubEach`: a line end (where no detector's find begins or ends, as at the start or end of a text)
 * around a NUL, which no text holds once normalised (Normalize.ts drops it) and no detector takes.
 */
const joint = "\n\u0000\n"

/**
 * `scrub` of every text of `texts`, giving other work a turn after each `sliceLength` characters or so. Many short
 * texts (a transcript's lines) are scrubbed as one text, joined by `joint`: each detector then runs once per slice
 * rather than once per text, which for 50,000 lines is ten times faster. Texts that hold a line end or a NUL, texts as
 * long as a slice, or a find that spans texts (a private key block opened in one and closed in another), are scrubbed one by one instead,
 * so the answer is always `texts.map(scrub)`.
 */
export const scrubEach = (texts: ReadonlyArray<string>): Effect.Effect<Array<string>> =>
  Effect.gen(function*() {
    // A text shorter than a slice keeps every slice's cut at a joint.
    const joinable = (text: string) => text.length < sliceLength - joint.length && !text.includes("\n") && !text.includes("\u0000")
    if (texts.every(joinable)) {
      const joined = (yield* scrubInSlices(texts.join(joint))).split(joint)
      if (joined.length === texts.length) return joined
    }
    const out: Array<string> = []
    let since = 0
    for (const text of texts) {
      out.push(scrub(text))
      since += text.length
      if (since >= sliceLength) {
        since = 0
        yield* giveWay
      }
    }
    return out
  })
