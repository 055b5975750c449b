/**
 * Cutting text for a prompt without breaking a character: every cut lands on a grapheme boundary (`Intl.Segmenter`),
 * so an emoji, a flag or a letter with its accents is kept whole or left out whole, and a cut never leaves half of a
 * UTF-16 surrogate pair (a lone surrogate is not valid text: providers reject it or replace it). The one home of that
 * rule: recall snippets and pages, the focus note, and the facts and extractive summary lines cut here.
 */

const graphemes = new Intl.Segmenter("en", { granularity: "grapheme" })

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
  const cluster = graphemes.segment(text).containing(at)
  if (cluster === undefined || cluster.index === at) return at
  return cluster.index > floor ? cluster.index : codePointBefore(text, at)
}

/** The longest prefix of `text` of at most `max` UTF-16 units that ends on a grapheme boundary (see `boundaryBefore`). */
export const clip = (text: string, max: number): string =>
  text.length <= max ? text : text.slice(0, boundaryBefore(text, Math.max(0, max)))

/** `text` cut to at most `max` units with `…` as the last one when it was longer (an empty string for `max` < 1). */
export const ellipsis = (text: string, max: number): string =>
  text.length <= max ? text : max < 1 ? "" : `${clip(text, max - 1)}…`
