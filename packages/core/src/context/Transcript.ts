/**
 * A transcript upload (WebVTT or SRT) read into spoken segments: cues parsed by @plussub/srt-vtt-parser, the
 * speaker of each line taken from a WebVTT voice tag (`<v Alice>Hello`) or a `Speaker: text` prefix (at most
 * 60 characters before the colon, no sentence punctuation in it); a line without either continues the segment
 * before it within the cue, or is spoken by "Unknown speaker". Other cue markup (`<b>`, `<i>`, `<c.x>`, inline
 * timestamps) is dropped and the five XML entities are decoded. A cue's offset is its start time.
 */
import { parse } from "@plussub/srt-vtt-parser"
import { Either } from "effect"

export interface SpokenLine {
  readonly offset_ms: number
  readonly speaker: string
  readonly text: string
}

export const unknownSpeaker = "Unknown speaker"

const voice = /^<v(?:\.[^\s>]*)?\s+([^>]+)>/
const prefix = /^([^:.!?<>\n]{1,60}):\s+(\S.*)$/
const tags = /<[^>]*>/g
const entities: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: "\"", apos: "'", nbsp: " " }

const plain = (text: string) =>
  text.replace(tags, "").replace(/&(amp|lt|gt|quot|apos|nbsp);/g, (_, name: string) => entities[name]!).trim()

/** A cue's text as lines, each with the speaker it names (undefined when it names none). */
const linesOf = (cue: string): Array<{ readonly speaker: string | undefined; readonly text: string }> =>
  cue.split("\n").flatMap((line) => {
    const tagged = voice.exec(line.trim())
    if (tagged !== null) {
      return [{ speaker: plain(tagged[1]!) || undefined, text: plain(line.trim().slice(tagged[0].length)) }]
    }
    const text = plain(line)
    if (text === "") return []
    const named = prefix.exec(text)
    return named === null ? [{ speaker: undefined, text }] : [{ speaker: named[1]!.trim(), text: named[2]!.trim() }]
  })

/** The segments of a WebVTT or SRT text, or why it is not one (a message for the uploader). */
export const parseTranscript = (text: string): Either.Either<ReadonlyArray<SpokenLine>, string> => {
  let entries: ReadonlyArray<{ readonly from: number; readonly text: string }>
  try {
    entries = parse(text).entries
  } catch {
    return Either.left("the transcript is not valid WebVTT or SRT: a cue could not be read")
  }
  const spoken: Array<SpokenLine> = []
  for (const entry of entries) {
    if (!Number.isFinite(entry.from) || entry.from < 0) {
      return Either.left("the transcript is not valid WebVTT or SRT: a cue has no valid start time")
    }
    const offset = Math.round(entry.from)
    let current: { speaker: string; text: string } | undefined
    for (const line of linesOf(entry.text)) {
      if (line.speaker === undefined && current !== undefined) {
        current.text = `${current.text} ${line.text}`.trim()
        continue
      }
      if (current !== undefined && current.text !== "") spoken.push({ offset_ms: offset, ...current })
      current = { speaker: line.speaker ?? unknownSpeaker, text: line.text }
    }
    if (current !== undefined && current.text !== "") spoken.push({ offset_ms: offset, ...current })
  }
  if (spoken.length === 0) return Either.left("the transcript is not valid WebVTT or SRT: it holds no cue with text")
  return Either.right(spoken)
}
