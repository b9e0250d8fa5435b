/**
 * UTF-8 without the platform's TextDecoder (core has no platform): a strict decoder that refuses any malformed
 * sequence (overlong forms, surrogates, code points past U+10FFFF, truncated sequences), and the encoded length
 * of a text.
 */

/** The text the bytes encode (a leading byte order mark dropped), or undefined when they are not UTF-8. */
export const decodeUtf8 = (bytes: Uint8Array): string | undefined => {
  const parts: Array<string> = []
  let units: Array<number> = []
  let i = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0
  const continuation = (at: number, low = 0x80, high = 0xbf) => {
    const byte = bytes[at]
    return byte !== undefined && byte >= low && byte <= high ? byte & 0x3f : -1
  }
  while (i < bytes.length) {
    const lead = bytes[i]!
    let codePoint: number
    if (lead < 0x80) {
      codePoint = lead
      i += 1
    } else if (lead >= 0xc2 && lead <= 0xdf) {
      const b1 = continuation(i + 1)
      if (b1 < 0) return undefined
      codePoint = ((lead & 0x1f) << 6) | b1
      i += 2
    } else if (lead >= 0xe0 && lead <= 0xef) {
      const b1 = continuation(i + 1, lead === 0xe0 ? 0xa0 : 0x80, lead === 0xed ? 0x9f : 0xbf)
      const b2 = continuation(i + 2)
      if (b1 < 0 || b2 < 0) return undefined
      codePoint = ((lead & 0x0f) << 12) | (b1 << 6) | b2
      i += 3
    } else if (lead >= 0xf0 && lead <= 0xf4) {
      const b1 = continuation(i + 1, lead === 0xf0 ? 0x90 : 0x80, lead === 0xf4 ? 0x8f : 0xbf)
      const b2 = continuation(i + 2)
      const b3 = continuation(i + 3)
      if (b1 < 0 || b2 < 0 || b3 < 0) return undefined
      codePoint = ((lead & 0x07) << 18) | (b1 << 12) | (b2 << 6) | b3
      i += 4
    } else {
      return undefined
    }
    if (codePoint > 0xffff) {
      const offset = codePoint - 0x10000
      units.push(0xd800 + (offset >> 10), 0xdc00 + (offset & 0x3ff))
    } else {
      units.push(codePoint)
    }
    if (units.length >= 8192) {
      parts.push(String.fromCharCode(...units))
      units = []
    }
  }
  parts.push(String.fromCharCode(...units))
  return parts.join("")
}

/** How many bytes the text takes in UTF-8 (a lone surrogate counts as the three bytes of U+FFFD). */
export const utf8Length = (text: string): number => {
  let length = 0
  for (const char of text) {
    const codePoint = char.codePointAt(0)!
    length += codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4
  }
  return length
}
