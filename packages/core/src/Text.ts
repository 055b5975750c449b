/**
 * Cutting text for a prompt without breaking a character: every cut lands on a grapheme boundary (`Intl.Segmenter`),
 * so an emoji, a flag or a letter with its accents is kept whole or left out whole, and a cut never leaves half of a
 * UTF-16 surrogate pair (a lone surrogate is not valid text: providers reject it or replace it). The one home of that
 * rule: recall snippets and pages, the focus note, and the facts and extractive summary lines cut here.
 */

// Made at the first cut, not at import: creating a segmenter loads ICU's break rules (~10-20 ms of CPU), which a
// process that never cuts text (`pivot window`, `pivot --version`) should not pay.
let graphemes: Intl.Segmenter | undefined
const segmenter = (): Intl.Segmenter => (graphemes ??= new Intl.Segmenter("en", { granularity: "grapheme" }))

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff

/** Whether `index` falls between the two halves of a surrogate pair (outside the text `charCodeAt` is NaN: no half). */
const splitsPair = (text: string, index: number): boolean =>
  isHigh(text.charCodeAt(index - 1)) && isLow(text.charCodeAt(index))

/** The code point boundary at or before `index` (clamped to the text). */
export const codePointBefore = (text: string, index: number): number => {
  const at = Math.min(Math.max(0, Math.floor(index)), text.length)
  return splitsPair(text, at) ? at - 1 : at
}

/** The code point boundary at or after `index` (clamped to the text). */
export const codePointAfter = (text: string, index: number): number => {
  const at = Math.min(Math.max(0, Math.floor(index)), text.length)
  return splitsPair(text, at) ? at + 1 : at
}

/**
 * The grapheme boundary at or before `index` (clamped to the text). A cluster that starts at or before `floor` (an
 * absurdly long one, e.g. a letter with thousands of combining marks) is cut at a code point boundary instead, so a
 * cut after `floor` always keeps something.
 */
export const boundaryBefore = (text: string, index: number, floor = 0): number => {
  const at = Math.min(Math.max(0, Math.floor(index)), text.length)
  // No cluster contains the end of the text.
  const cluster = segmenter().segment(text).containing(at)
  if (cluster === undefined || cluster.index === at) return at
  return cluster.index > floor ? cluster.index : codePointBefore(text, at)
}

/** The longest prefix of `text` of at most `max` UTF-16 units that ends on a grapheme boundary (see `boundaryBefore`). */
export const clip = (text: string, max: number): string =>
  text.length <= max ? text : text.slice(0, boundaryBefore(text, Math.max(0, max)))

/** `text` cut to at most `max` units with `…` as the last one when it was longer (an empty string for `max` < 1). */
export const ellipsis = (text: string, max: number): string =>
  text.length <= max ? text : max < 1 ? "" : `${clip(text, max - 1)}…`

/**
 * A number rounded to an integer and written with a comma between groups of three digits, as
 * `Math.round(n).toLocaleString("en-US")` writes it (`1234567.4` → `"1,234,567"`), without ICU: the first
 * `toLocaleString` of a process loads ICU's number formats (~10-30 ms of CPU), which a short command should not pay.
 * The one home of that format: the CLI's and the runtime's tables and the HUD call it.
 */
export const thousands = (n: number): string => {
  const rounded = Math.round(n)
  // Past 1e21 `String` switches to exponent notation; NaN, the infinities and -0 are written by ICU.
  if (!Number.isFinite(rounded) || Math.abs(rounded) >= 1e21 || Object.is(rounded, -0))
    return rounded.toLocaleString("en-US")
  const digits = String(Math.abs(rounded))
  let out = digits.slice(0, digits.length % 3 || 3)
  for (let i = out.length; i < digits.length; i += 3) out += `,${digits.slice(i, i + 3)}`
  return rounded < 0 ? `-${out}` : out
}
