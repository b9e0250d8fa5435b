/**
 * The PII scrubber (context/Scrubber.ts) measured on a labelled corpus: for every detector, snippets that hold
 * one thing it must find (positives) and near misses it must leave alone (negatives: version numbers, dates,
 * order numbers, digit strings that fail Luhn or mod-97, ISBNs, times, MAC addresses, ...). Each snippet is
 * scrubbed whole (all detectors, in their order), and a detector counts a hit when its placeholder appears. The
 * run prints precision and recall per detector and overall, and fails below the floors.
 */
import { Scrubber } from "@convene/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck } from "effect"

type Kind = Scrubber.PiiKind

interface Labelled {
  readonly text: string
  /** The kinds the scrubbed snippet must show (empty: a near miss that must stay as it is). */
  readonly kinds: ReadonlyArray<Kind>
  /** The sensitive value that must be gone after scrubbing (positives). */
  readonly value?: string
}

const positive = (kind: Kind, value: string, template = "Note: {} was mentioned.") => ({
  text: template.replace("{}", value),
  kinds: [kind],
  value
})
const negative = (text: string): Labelled => ({ text, kinds: [] })

const b64 = "Zq3xY8mK1pR7tW2vB9nL4cF6hJ0sD5gE8aQ1uI3oP7y"

const corpus: Record<Kind, { readonly positives: ReadonlyArray<Labelled>; readonly negatives: ReadonlyArray<Labelled> }> = {
  SECRET: {
    positives: [
      positive("SECRET", `svc_pat_v1_${b64}`, "export CONVENE_TOKEN={}"),
      positive("SECRET", `svc_wk_v1_${b64}`, "key: {}"),
      positive("SECRET", `svc_at_v1_${b64}`),
      positive("SECRET", `svc_rt_v1_${b64}`),
      positive("SECRET", `svc_slt_v1_${b64}`),
      positive("SECRET", `svc_ses_v1_${b64}`),
      positive("SECRET", `svc_rat_v1_${b64}`),
      positive("SECRET", "whsec_9c1a7f0e2b4d6a8c0e2f4a6b8d0c2e4f", "signing secret {} for the hook"),
      positive("SECRET", "ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A", "GITHUB_TOKEN={}"),
      positive("SECRET", "gho_16C7e42F292c6912E7710c838347Ae178B4a"),
      positive("SECRET", "ghs_1234567890abcdefghijABCDEFGHIJ123456"),
      positive(
        "SECRET",
        "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789abcd"
      ),
      positive("SECRET", "AKIAIOSFODNN7EXAMPLE", "aws_access_key_id = {}"),
      positive("SECRET", "ASIAY34FZKBOKMUTVV7A"),
      positive("SECRET", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "slack bot {}"),
      positive("SECRET", "xoxp-2048-4096-8192-0a1b2c3d4e5f6a7b8c9d"),
      positive("SECRET", "xapp-1-A0123456789-0123456789012-abcdef0123456789"),
      positive("SECRET", "sk_live_51H8xYzAbCdEfGhIjKlMnOpQr", "stripe: {}"),
      positive("SECRET", "sk_test_4eC39HqLyjWDarjtT1zdp7dc"),
      positive("SECRET", "rk_live_51H8xYzAbCdEfGhIjKl"),
      positive("SECRET", "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcd", "OPENAI_API_KEY={}"),
      positive("SECRET", "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW", "maps key {}"),
      positive(
        "SECRET",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        "Authorization: Bearer {}"
      ),
      positive(
        "SECRET",
        "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----",
        "key file:\n{}\nend"
      ),
      positive("SECRET", "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34GkxFhD90vcNLYLInFEX6Ppy1tPf9Cnzj4p4WGeKLs1Pt8Qu\n-----END RSA PRIVATE KEY-----")
    ],
    negatives: [
      negative("The ghp_ prefix marks GitHub personal tokens."),
      negative("Use sk_live_ keys only in production."),
      negative("svc_pat_v1_ tokens are personal access tokens."),
      negative("The AKIA prefix is followed by sixteen characters."),
      negative("Akiapolaau is a Hawaiian bird."),
      negative("xox is a tic-tac-toe move."),
      negative("The JWT header starts with eyJhbGciOi in base64."),
      negative("Request id 123e4567-e89b-12d3-a456-426614174000 failed."),
      negative("Commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixed it."),
      negative("sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
      negative("The sk-learn library is fine."),
      negative("Call the task-runner-with-a-very-long-name-indeed."),
      negative("-----BEGIN CERTIFICATE----- is public."),
      negative("our webhook secrets start with whsec_"),
      negative("snake_case_identifier_names_are_common_in_python_code_bases"),
      negative("Base64 of hello is aGVsbG8="),
      negative("Ticket ABCD-1234 is done."),
      negative("AWS region eu-west-1 and bucket my-bucket"),
      negative("The file is named github_pat_notes.md"),
      negative("Version v2.14.3-rc1 ships today.")
    ]
  },
  EMAIL: {
    positives: [
      positive("EMAIL", "alice@example.com"),
      positive("EMAIL", "bob.smith@mail.example.co.uk", "Write to {}."),
      positive("EMAIL", "carol+meetings@example.org", "cc: {}"),
      positive("EMAIL", "dave_o'neil@example.com".replace("'", ""), "from {}"),
      positive("EMAIL", "e.f.g@sub.domain.example.io"),
      positive("EMAIL", "FRANK@EXAMPLE.COM"),
      positive("EMAIL", "jörg@beispiel.de", "Kontakt: {}"),
      positive("EMAIL", "user123@example-mail.com", "<{}>"),
      positive("EMAIL", "x@example.travel"),
      positive("EMAIL", "first.last@example.com", "mailto:{}"),
      positive("EMAIL", "ops-team@company.example", "({})"),
      positive("EMAIL", "a1@b2.cd"),
      positive("EMAIL", "support@example.com", "Questions? {}."),
      positive("EMAIL", "git@github.com", "clone {}:org/repo.git"),
      positive("EMAIL", "héloïse@exemple.fr"),
      positive("EMAIL", "name%tag@example.net"),
      positive("EMAIL", "m.ller@example.com", "\"Müller\" <{}>"),
      positive("EMAIL", "sales@example.com", "Email sales@example.com today".replace("sales@example.com", "{}")),
      positive("EMAIL", "no-reply@notifications.example.com"),
      positive("EMAIL", "team@example.com", "- {}\n- next")
    ],
    negatives: [
      negative("Ping @alice in the channel."),
      negative("Install effect@3.22.4 and vitest@3.2.7."),
      negative("user@localhost is not routable."),
      negative("Meet at 10@the office."),
      negative("The price is 5 @ $3."),
      negative("Decorators like @Component are used."),
      negative("Email addresses have an @ sign."),
      negative("npm i @effect/platform@0.97"),
      negative("foo@bar is a placeholder."),
      negative("Tweet from @example.com is fake?"),
      negative("Version 1.2@beta"),
      negative("a@b"),
      negative("Use name [at] example [dot] com."),
      negative("@@ -1,3 +1,4 @@ diff header"),
      negative("ssh://host:22/path")
    ]
  },
  IBAN: {
    positives: [
      positive("IBAN", "GB82 WEST 1234 5698 7654 32", "Pay to {}."),
      positive("IBAN", "GB82WEST12345698765432"),
      positive("IBAN", "DE89 3704 0044 0532 0130 00", "IBAN: {}"),
      positive("IBAN", "DE89370400440532013000"),
      positive("IBAN", "FR14 2004 1010 0505 0001 3M02 606"),
      positive("IBAN", "NL91 ABNA 0417 1643 00"),
      positive("IBAN", "ES91 2100 0418 4502 0005 1332"),
      positive("IBAN", "IT60 X054 2811 1010 0000 0123 456"),
      positive("IBAN", "BE68 5390 0754 7034"),
      positive("IBAN", "CH93 0076 2011 6238 5295 7"),
      positive("IBAN", "AT61 1904 3002 3457 3201"),
      positive("IBAN", "NO93 8601 1117 947"),
      positive("IBAN", "SE45 5000 0000 0583 9825 7466"),
      positive("IBAN", "PL61 1090 1014 0000 0712 1981 2874"),
      positive("IBAN", "DK50 0040 0440 1162 43"),
      positive("IBAN", "FI21 1234 5600 0007 85"),
      positive("IBAN", "IE29 AIBK 9311 5212 3456 78"),
      positive("IBAN", "PT50 0002 0123 1234 5678 9015 4"),
      positive("IBAN", "LU28 0019 4006 4475 0000"),
      positive("IBAN", "GB82-WEST-1234-5698-7654-32")
    ],
    negatives: [
      negative("GB82 WEST 1234 5698 7654 33 has a wrong check digit."),
      negative("DE89 3704 0044 0532 0130 01 is mistyped."),
      negative("Invoice XX12 3456 7890 1234 5678 90 is not an IBAN."),
      negative("Part number AB12CDEF34567890"),
      negative("NL91 ABNA 0417 16 is too short."),
      negative("Flight LH12 3456 departs at 10:00."),
      negative("Order SO12345678901234 shipped."),
      negative("Serial FR14200410100505000"),
      negative("Postcode SW1A 1AA, London."),
      negative("Reference GB00 0000 0000 0000 0000 00"),
      negative("Model DE89-X is new."),
      negative("US12 3456 7890 1234 5678")
    ]
  },
  CARD: {
    positives: [
      positive("CARD", "4111 1111 1111 1111", "Card: {} exp 12/27"),
      positive("CARD", "4111111111111111"),
      positive("CARD", "4012-8888-8888-1881"),
      positive("CARD", "5555 5555 5555 4444"),
      positive("CARD", "5105105105105100"),
      positive("CARD", "3782 822463 10005", "Amex {}"),
      positive("CARD", "371449635398431"),
      positive("CARD", "6011 1111 1111 1117"),
      positive("CARD", "6011000990139424"),
      positive("CARD", "3530 1113 3330 0000"),
      positive("CARD", "3566002020360505"),
      positive("CARD", "3056 930902 5904"),
      positive("CARD", "38520000023237"),
      positive("CARD", "4222222222222"),
      positive("CARD", "2223 0031 2200 3222"),
      positive("CARD", "6200000000000005"),
      positive("CARD", "5200 8282 8282 8210"),
      positive("CARD", "4000 0566 5566 5556"),
      positive("CARD", "4111-1111-1111-1111", "paid with {}."),
      positive("CARD", "5555555555554444", "({})")
    ],
    negatives: [
      negative("Card 4111 1111 1111 1112 fails the check digit."),
      negative("Order 1234567890123456 is on its way."),
      negative("ISBN 978-3-16-148410-0"),
      negative("ISBN 9781234567897 reprinted."),
      negative("Tracking 1Z999AA10123456784"),
      negative("Timestamp 1700000000000 in ms."),
      negative("Account 0000 0000 0000 0000"),
      negative("Build 2024.01.15.1234567890"),
      negative("Total 1,234,567,890,123 units."),
      negative("Digits 9999999999999995 and more."),
      negative("Serial 1111-2222-3333-4444"),
      { text: "Phone +1 415 555 2671 call now", kinds: ["PHONE"] },
      negative("Version 4.1.1.1111.1111.1111"),
      negative("Amount 4111.111111111111"),
      negative("Code 7000 0000 0000 0006")
    ]
  },
  NATIONAL_ID: {
    positives: [
      positive("NATIONAL_ID", "078-05-1120", "SSN {}"),
      positive("NATIONAL_ID", "123-45-6789"),
      positive("NATIONAL_ID", "219-09-9999"),
      positive("NATIONAL_ID", "457 55 5462", "SSN: {}"),
      positive("NATIONAL_ID", "536-22-1234"),
      positive("NATIONAL_ID", "AB 12 34 56 C", "NI number {}"),
      positive("NATIONAL_ID", "AB123456C"),
      positive("NATIONAL_ID", "JG103759A"),
      positive("NATIONAL_ID", "ZX 98 76 54 D"),
      positive("NATIONAL_ID", "CE 00 11 22 B"),
      positive("NATIONAL_ID", "325-437-259", "SIN {}"),
      positive("NATIONAL_ID", "200 780 963"),
      positive("NATIONAL_ID", "130-437-866"),
      positive("NATIONAL_ID", "518 554 019"),
      positive("NATIONAL_ID", "12345678Z", "DNI {}"),
      positive("NATIONAL_ID", "87654321X"),
      positive("NATIONAL_ID", "45678912-S"),
      positive("NATIONAL_ID", "X1234567L", "NIE {}"),
      positive("NATIONAL_ID", "Y7654321G"),
      positive("NATIONAL_ID", "Z0001234C")
    ],
    negatives: [
      negative("SSN 000-12-3456 is never issued."),
      negative("666-12-3456 is not valid."),
      negative("900-12-3456 is an ITIN range."),
      negative("123-00-4567 has group 00."),
      negative("123-45-0000 has serial 0000."),
      negative("Due 2024-01-15 at noon."),
      negative("Call 555-123-4567."),
      negative("Mixed 123-45 6789 separators."),
      negative("BG 12 34 56 A is not allocated."),
      negative("GB123456A is not a NINO."),
      negative("DA123456A has a D."),
      negative("AB123456E ends wrong."),
      negative("SIN 123-456-789 fails Luhn."),
      negative("12345678A has the wrong letter."),
      negative("X1234567A has the wrong letter."),
      negative("Part 12-345-6789 listed."),
      negative("Room 123 45 678 booked."),
      negative("Version 20.04.6 LTS")
    ]
  },
  IP: {
    positives: [
      positive("IP", "192.168.1.1", "Server at {}."),
      positive("IP", "10.0.0.254"),
      positive("IP", "8.8.8.8", "DNS {}"),
      positive("IP", "172.16.254.1"),
      positive("IP", "203.0.113.7", "from {}:443"),
      positive("IP", "255.255.255.0", "mask {}"),
      positive("IP", "127.0.0.1"),
      positive("IP", "2001:db8::1"),
      positive("IP", "fe80::1ff:fe23:4567:890a"),
      positive("IP", "::1", "loopback {}"),
      positive("IP", "2001:0db8:85a3:0000:0000:8a2e:0370:7334"),
      positive("IP", "::ffff:192.0.2.128"),
      positive("IP", "2606:4700:4700::1111"),
      positive("IP", "FE80::ABCD"),
      positive("IP", "100.64.0.1", "CGNAT {}."),
      positive("IP", "1.1.1.1"),
      positive("IP", "2001:db8:0:0:1:0:0:1"),
      positive("IP", "192.0.2.33", "[{}]"),
      positive("IP", "fd00::1:2"),
      positive("IP", "169.254.10.20")
    ],
    negatives: [
      negative("Release 1.2.3 is out."),
      negative("Running v1.2.3.4 now."),
      negative("256.1.1.1 is out of range."),
      negative("Version 1.2.3.4.5 broke it."),
      negative("Meet at 12:30:45 today."),
      negative("MAC 00:1A:2B:3C:4D:5E"),
      negative("Use std::vector<int> here."),
      negative("Slice a[::2] in Python."),
      negative("Date 2024.01.15"),
      negative("Build 10.0.19041 of Windows"),
      negative("Ratio 3:4:5 works."),
      negative("Chapter 1.2.3.4a"),
      negative("Time 10:30 to 11:45"),
      negative("Perl Foo::Bar module"),
      negative("Price 1.299.999,00 EUR"),
      negative("Scores 1:0, 2:1")
    ]
  },
  PHONE: {
    positives: [
      positive("PHONE", "+44 20 7946 0958", "Call {} today"),
      positive("PHONE", "(415) 555-2671"),
      positive("PHONE", "415-555-2671", "mobile: {}"),
      positive("PHONE", "+1 212 555 0198"),
      positive("PHONE", "+49 30 901820"),
      positive("PHONE", "+33 1 42 68 53 00"),
      positive("PHONE", "020 7946 0958", "office {}"),
      positive("PHONE", "+81 3-1234-5678"),
      positive("PHONE", "+61 2 9374 4000"),
      positive("PHONE", "202-555-0143"),
      positive("PHONE", "1-800-555-0199"),
      positive("PHONE", "+1 (416) 555-0123"),
      positive("PHONE", "(416) 555-0123"),
      positive("PHONE", "07911 123456", "UK mobile {}"),
      positive("PHONE", "+34 912 345 678"),
      positive("PHONE", "+31 20 624 1111"),
      positive("PHONE", "+46 8 123 456 78"),
      positive("PHONE", "415.555.2671"),
      positive("PHONE", "+39 06 6982 1234"),
      positive("PHONE", "+353 1 234 5678"),
      positive("PHONE", "+33 1 42 68 53 00", "Call ({}) now")
    ],
    negatives: [
      negative("Order 1234567890 shipped."),
      negative("Due 12/05/2024 at 12:30."),
      negative("Extension 555-0143 only."),
      negative("ISBN 978-3-16-148410-0"),
      negative("Version 2.3.4.5 released."),
      negative("Date 2024-01-15"),
      negative("ZIP code 94103"),
      negative("Room 4012 on floor 3."),
      negative("Price $1,234,567.89"),
      negative("Population 2,000,000"),
      negative("Ticket #123456"),
      negative("Invoice 2024-000123"),
      negative("Account 0301234567"),
      negative("Timestamp 1700000000"),
      negative("Part 12-34-56"),
      negative("Between 10 and 20 people")
    ]
  }
}

const kinds = Object.keys(corpus) as ReadonlyArray<Kind>

const entries: ReadonlyArray<Labelled> = kinds.flatMap((kind) => [...corpus[kind].positives, ...corpus[kind].negatives])

const found = (scrubbed: string): ReadonlySet<Kind> => new Set(kinds.filter((kind) => scrubbed.includes(Scrubber.placeholder(kind))))

interface Score {
  tp: number
  fp: number
  fn: number
}

const ratio = (a: number, b: number) => (b === 0 ? 1 : a / b)

const measure = () => {
  const scores = new Map<Kind, Score>(kinds.map((kind) => [kind, { tp: 0, fp: 0, fn: 0 }]))
  const misses: Array<string> = []
  for (const entry of entries) {
    const scrubbed = Scrubber.scrub(entry.text)
    const got = found(scrubbed)
    for (const kind of kinds) {
      const score = scores.get(kind)!
      const expected = entry.kinds.includes(kind)
      if (expected && got.has(kind)) score.tp++
      else if (expected) {
        score.fn++
        misses.push(`missed ${kind}: ${JSON.stringify(entry.text)} -> ${JSON.stringify(scrubbed)}`)
      } else if (got.has(kind)) {
        score.fp++
        misses.push(`false ${kind}: ${JSON.stringify(entry.text)} -> ${JSON.stringify(scrubbed)}`)
      }
    }
  }
  return { scores, misses }
}

describe("Scrubber on the labelled corpus", () => {
  const { misses, scores } = measure()
  const total = [...scores.values()].reduce((sum, s) => ({ tp: sum.tp + s.tp, fp: sum.fp + s.fp, fn: sum.fn + s.fn }), {
    tp: 0,
    fp: 0,
    fn: 0
  })
  const lines = [
    "detector     positives negatives precision recall",
    ...kinds.map((kind) => {
      const s = scores.get(kind)!
      return `${kind.padEnd(12)} ${String(corpus[kind].positives.length).padStart(9)} ${String(corpus[kind].negatives.length).padStart(9)} ` +
        `${ratio(s.tp, s.tp + s.fp).toFixed(3).padStart(9)} ${ratio(s.tp, s.tp + s.fn).toFixed(3).padStart(6)}`
    }),
    `${"overall".padEnd(12)} ${String(entries.filter((e) => e.kinds.length > 0).length).padStart(9)} ${
      String(entries.filter((e) => e.kinds.length === 0).length).padStart(9)
    } ${ratio(total.tp, total.tp + total.fp).toFixed(3).padStart(9)} ${ratio(total.tp, total.tp + total.fn).toFixed(3).padStart(6)}`
  ]
  console.log(["PII scrubber, precision and recall per detector:", ...lines, ...misses].join("\n"))

  it("has a few dozen labelled snippets per detector, positives and near misses", () => {
    for (const kind of kinds) {
      expect(corpus[kind].positives.length + corpus[kind].negatives.length).toBeGreaterThanOrEqual(24)
      expect(corpus[kind].negatives.length).toBeGreaterThanOrEqual(10)
    }
  })

  it.each(kinds)("%s: precision and recall at least 0.9", (kind) => {
    const s = scores.get(kind)!
    expect(ratio(s.tp, s.tp + s.fp)).toBeGreaterThanOrEqual(0.9)
    expect(ratio(s.tp, s.tp + s.fn)).toBeGreaterThanOrEqual(0.9)
  })

  it("overall: precision and recall at least 0.95", () => {
    expect(ratio(total.tp, total.tp + total.fp)).toBeGreaterThanOrEqual(0.95)
    expect(ratio(total.tp, total.tp + total.fn)).toBeGreaterThanOrEqual(0.95)
  })

  it("a found value is gone from the scrubbed text, replaced by its placeholder", () => {
    for (const entry of entries.filter((e) => e.value !== undefined)) {
      const scrubbed = Scrubber.scrub(entry.text)
      if (!found(scrubbed).has(entry.kinds[0]!)) continue
      expect(scrubbed).not.toContain(entry.value)
    }
  })

  it("a near miss comes out unchanged when no detector takes it", () => {
    const unchanged = entries.filter((e) => e.kinds.length === 0 && found(Scrubber.scrub(e.text)).size === 0)
    for (const entry of unchanged) expect(Scrubber.scrub(entry.text)).toBe(entry.text)
  })
})

describe("Scrubber", () => {
  it("replaces each kind by its typed placeholder, in one text", () => {
    const text = "Mail dana@example.com, call +44 20 7946 0958, card 4111 1111 1111 1111, IBAN DE89 3704 0044 0532 0130 00, " +
      "SSN 078-05-1120, host 10.0.0.1, token ghp_aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z5A."
    expect(Scrubber.scrub(text)).toBe(
      "Mail [EMAIL], call [PHONE], card [CARD], IBAN [IBAN], SSN [NATIONAL_ID], host [IP], token [SECRET]."
    )
  })

  it("is deterministic and idempotent: scrubbing scrubbed text changes nothing", () => {
    const text = "alice@example.com 192.168.0.1 (415) 555-2671 sk_live_51H8xYzAbCdEfGhIjKlMnOpQr"
    const once = Scrubber.scrub(text)
    expect(Scrubber.scrub(text)).toBe(once)
    expect(Scrubber.scrub(once)).toBe(once)
  })

  const token = FastCheck.oneof(
    FastCheck.constantFrom(
      "alice@example.com", "4111 1111 1111 1111", "(415) 555-2671", "+44 20 7946 0958", "10.0.0.1", "2001:db8::1",
      "078-05-1120", "GB82 WEST 1234 5698 7654 32", "AKIAIOSFODNN7EXAMPLE", "v1.2.3", "2024-01-15", " ", "\n", ",", ".", ":", "-", "@"
    ),
    FastCheck.integer({ min: 0, max: 99_999_999 }).map(String),
    FastCheck.string({ maxLength: 6 })
  )
  const mixed = FastCheck.array(token, { maxLength: 20 }).map((parts) => parts.join(""))

  it.prop("scrubbing scrubbed text changes nothing (mixed PII, numbers and noise)", [mixed], ([text]) => {
    const once = Scrubber.scrub(text)
    expect(Scrubber.scrub(once)).toBe(once)
  })

  const word = FastCheck.stringMatching(/^[A-Za-z]{1,8}$/)
  const values = entries.flatMap((entry) => (entry.value === undefined ? [] : [entry.value]))

  it.prop("any labelled value between arbitrary words is found and removed", [
    FastCheck.array(word, { maxLength: 4 }),
    FastCheck.constantFrom(...values),
    FastCheck.array(word, { maxLength: 4 }),
    FastCheck.constantFrom(" ", "\n", ", ", " (", "\t")
  ], ([before, value, after, gap]) => {
    const text = [...before, value, ...after].join(gap)
    expect(Scrubber.scrub(text)).not.toContain(value)
  })

  it("checks IBANs with mod-97 and cards with Luhn", () => {
    expect(Scrubber.ibanChecks("GB82WEST12345698765432")).toBe(true)
    expect(Scrubber.ibanChecks("GB82WEST12345698765433")).toBe(false)
    expect(Scrubber.luhn("4111111111111111")).toBe(true)
    expect(Scrubber.luhn("4111111111111112")).toBe(false)
  })

  it("tells IPv6 addresses from times and MAC addresses", () => {
    expect(Scrubber.isIpv6("2001:db8::1")).toBe(true)
    expect(Scrubber.isIpv6("::ffff:192.0.2.128")).toBe(true)
    expect(Scrubber.isIpv6("12:30:45")).toBe(false)
    expect(Scrubber.isIpv6("00:1A:2B:3C:4D:5E")).toBe(false)
    expect(Scrubber.isIpv6("1::2::3")).toBe(false)
  })
})

describe("Scrubber on large text", () => {
  const line = "Revenue for 2026 was discussed; call Ann on +44 20 7946 0958 or ann@example.com (card 4111 1111 1111 1111).\n"

  it.prop("cuts text into slices that join back into it, none longer than asked", [
    FastCheck.string({ unit: FastCheck.constantFrom("a", " ", "\n", ".", "7", "é"), maxLength: 400 }),
    FastCheck.integer({ min: 1, max: 50 })
  ], ([text, length]) => {
    const slices = Scrubber.slicesOf(text, length)
    expect(slices.join("")).toBe(text)
    for (const slice of slices) expect(slice.length).toBeLessThanOrEqual(Math.max(length, 1))
  })

  it("cuts after a line end, else after a sentence, else after white space", () => {
    expect(Scrubber.slicesOf("one\ntwo three", 9)).toEqual(["one\n", "two three"])
    expect(Scrubber.slicesOf("Call +44 20 7946 0958. Then go on", 28)).toEqual(["Call +44 20 7946 0958. ", "Then go on"])
    expect(Scrubber.slicesOf("aaaa bbbbbbbb", 8)).toEqual(["aaaa ", "bbbbbbbb"])
    expect(Scrubber.slicesOf("abcdefgh", 3)).toEqual(["abc", "def", "gh"])
  })

  it.effect("scrubs slice by slice to what scrubbing the whole text gives", () =>
    Effect.gen(function*() {
      const text = line.repeat(3000)
      expect(text.length).toBeGreaterThan(3 * Scrubber.sliceLength)
      expect(yield* Scrubber.scrubInSlices(text)).toBe(Scrubber.scrub(text))
      expect(yield* Scrubber.scrubEach([line, "ann@example.com", ""])).toEqual([Scrubber.scrub(line), "[EMAIL]", ""])
    }))

  it.effect("never cuts a private key block between slices", () =>
    Effect.gen(function*() {
      const key = ["-----BEGIN RSA PRIVATE KEY-----", ...Array.from({ length: 25 }, (_, i) => `MIIEpAIBAAKCAQEA${i}xyzSecretKeyMaterial0123456789abcdefABCDEF`), "-----END RSA PRIVATE KEY-----"]
        .join("\n")
      const filler = "Notes from the planning meeting, nothing personal in this line.\n"
      // The block opens a few hundred characters before the first slice would end, and closes after it.
      const before = filler.repeat(Math.floor((Scrubber.sliceLength - 300) / filler.length))
      const text = `${before}${key}\n${filler.repeat(50)}`
      const slices = Scrubber.slicesOf(text)
      expect(slices.join("")).toBe(text)
      expect(slices.some((slice) => slice.includes("-----BEGIN") && slice.includes("-----END"))).toBe(true)
      const scrubbed = yield* Scrubber.scrubInSlices(text)
      expect(scrubbed).not.toContain("SecretKeyMaterial")
      expect(scrubbed).toBe(Scrubber.scrub(text))
    }))

  it.effect.prop("scrubs many texts to what scrubbing each gives, whether they join or not", [
    FastCheck.array(
      FastCheck.oneof(
        FastCheck.constantFrom(
          "ann@example.com",
          "call +44 20 7946 0958",
          "Version",
          "10.0.0.1 is the host",
          "card 4111 1111 1111 1111",
          "-----BEGIN PRIVATE KEY----- abc",
          "def -----END PRIVATE KEY-----",
          "two\nlines ann@example.com",
          "",
          "(555) 123-4567"
        ),
        FastCheck.string({ unit: FastCheck.constantFrom("a", " ", ".", "7", "@", "+", "-", "é"), maxLength: 40 })
      ),
      { maxLength: 30 }
    )
  ], ([texts]) =>
    Effect.gen(function*() {
      expect(yield* Scrubber.scrubEach(texts)).toEqual(texts.map(Scrubber.scrub))
    }))

  it("gives the host's timers and I/O turns while it scrubs megabytes", async () => {
    const text = line.repeat(20_000)
    let ticks = 0
    const timer = setInterval(() => ticks++, 1)
    try {
      const scrubbed = await Effect.runPromise(Scrubber.scrubInSlices(text))
      expect(scrubbed).not.toContain("ann@example.com")
    } finally {
      clearInterval(timer)
    }
    // About 35 slices: a timer that fired between them proves the thread was not held from start to end.
    expect(ticks).toBeGreaterThan(10)
  })
})
