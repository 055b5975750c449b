/**
 * The rules of `context_recall`: what the model can re-read, how an id and a query are checked, how a query is split
 * into search terms and ranked (the scan every backend's full-text search must agree with on which documents match),
 * and how an answer is bounded and worded. Pure: the runtime reads the session and records the `ContextRecalled` event.
 *
 * Recallable documents are the outputs a prune cleared (by their part id, the id the placeholder names), the tool
 * inputs a prune cleared (by `Render.inputRecallId`, `prt_…-input`: the input as JSON, its keys in their stored order)
 * and finished summaries (by their message id). pivot never deletes a pruned output, so the original comes back byte for byte;
 * what record-time redaction or crypto-shredding removed was never stored, so it never comes back.
 */
import { isFinishedSummary, type Message, summaryText } from "./Message.ts"
import { inputRecallId } from "./Render.ts"
import * as Text from "./Text.ts"

/** What a recallable document is. */
export type Kind = "output" | "input" | "summary"

/** One thing the model can re-read. */
export interface Document {
  /** The recall id: the part id of a pruned output, `prt_…-input` of a cleared input, the message id of a summary. */
  readonly id: string
  readonly kind: Kind
  readonly messageId: string
  /** The tool that produced an output, or whose input it is. */
  readonly tool?: string | undefined
  readonly text: string
}

/**
 * The recallable documents one stored message holds: its pruned outputs and cleared inputs (in part order, a part's
 * input before its output), or itself when it is a finished summary.
 */
export const documentsOf = (message: Message): Array<Document> => {
  if (message.role !== "assistant") return []
  if (message.summary === true) {
    const text = isFinishedSummary(message) ? summaryText(message) : undefined
    return text === undefined ? [] : [{ id: message.id, kind: "summary", messageId: message.id, text }]
  }
  const out: Array<Document> = []
  for (const part of message.parts) {
    if (part.type !== "tool") continue
    const state = part.state
    if ((state.status === "completed" || state.status === "error") && state.inputClearedAt !== undefined)
      out.push({
        id: inputRecallId(part.id),
        kind: "input",
        messageId: message.id,
        tool: part.tool,
        text: JSON.stringify(state.input),
      })
    if (state.status === "completed" && state.compactedAt !== undefined)
      out.push({ id: part.id, kind: "output", messageId: message.id, tool: part.tool, text: state.output })
  }
  return out
}

/** The recallable document with this id in a message, if there is one. */
export const documentIn = (message: Message, id: string): Document | undefined =>
  documentsOf(message).find((d) => d.id === id)

/** Every recallable document of a conversation, in the order of its messages. */
export const documents = (messages: Iterable<Message>): Array<Document> => {
  const out: Array<Document> = []
  for (const message of messages) out.push(...documentsOf(message))
  return out
}

// ── Requests

/** The most search terms a query keeps (the rest are ignored). */
export const MAX_TERMS = 16
/** The default bound of an answer, in characters. */
export const DEFAULT_MAX_CHARS = 16_000
/** The default number of hits a query answers. */
export const DEFAULT_LIMIT = 5
/** The characters of context a snippet shows around its first match. */
export const SNIPPET_CHARS = 160

const RECALL_ID = /^(prt|msg)_[0-9A-Za-z_-]{1,64}$/
/** Whether a string has the shape of a recall id (`prt_…` or `msg_…`); says nothing of whether it exists. */
export const isRecallId = (id: string): boolean => RECALL_ID.test(id)

// Scripts written without spaces between words (Chinese, Japanese) or that glue particles to words (Korean).
const CJK = /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}]+/gu
const CJK_FIRST = /^[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Hangul}]/u

/**
 * Whether a search term is CJK text, matched as a substring of a document rather than as a whole word: a word
 * tokeniser sees an unbroken run of Han, kana or Hangul as one word, so "连接" would never find "数据库连接失败".
 */
export const isSubstringTerm = (term: string): boolean => CJK_FIRST.test(term)

/**
 * The search terms of a query, each once, at most `MAX_TERMS`: its words (letters and digits), lowercased, with every
 * run of CJK characters in a word split out as a term of its own (`isSubstringTerm`): "数据库error" is "数据库" and "error".
 */
export const terms = (query: string): Array<string> => {
  const out: Array<string> = []
  const add = (term: string) => {
    if (term !== "" && out.length < MAX_TERMS && !out.includes(term)) out.push(term)
  }
  for (const match of query.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu)) {
    const word = match[0]
    let from = 0
    for (const run of word.matchAll(CJK)) {
      add(word.slice(from, run.index))
      add(run[0])
      from = run.index + run[0].length
    }
    add(word.slice(from))
    if (out.length === MAX_TERMS) break
  }
  return out
}

/** A query's terms split by how they match: whole words, and CJK substrings. */
export const termKinds = (
  queryTerms: ReadonlyArray<string>,
): { readonly words: ReadonlyArray<string>; readonly substrings: ReadonlyArray<string> } => ({
  words: queryTerms.filter((t) => !isSubstringTerm(t)),
  substrings: queryTerms.filter(isSubstringTerm),
})

const occurrences = (text: string, term: string): number => {
  let n = 0
  for (let at = text.indexOf(term); at >= 0; at = text.indexOf(term, at + term.length)) n++
  return n
}

/** The words of a text, lowercased, in order (the tokens a term must equal to match). */
export const words = (text: string): Array<string> =>
  [...text.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu)].map((m) => m[0])

/** One search result. */
export interface Hit {
  readonly id: string
  readonly kind: Kind
  readonly tool?: string | undefined
  /** A short excerpt around the first match. */
  readonly snippet: string
  /** Characters of the whole document (what recall by id would return before the bound). */
  readonly chars: number
}

/**
 * A document's score for some terms: how many of its words are one of the word terms, plus how often each CJK term
 * occurs in it, damped by its length (`matches / (1 + ln words)`, PostgreSQL's `ts_rank_cd` normalisation 1), so a
 * short document that repeats a term outranks a long one that mentions it once. 0: it does not match.
 */
export const score = (document: Document, queryTerms: ReadonlyArray<string>): number => {
  const all = words(document.text)
  const kinds = termKinds(queryTerms)
  let n = 0
  for (const w of all) if (kinds.words.includes(w)) n++
  // CJK has no case: the original text is searched, as the SQL stores search their stored body.
  for (const term of kinds.substrings) n += occurrences(document.text, term)
  return n === 0 ? 0 : n / (1 + Math.log(Math.max(1, all.length)))
}

/**
 * A plain excerpt of a text around the first match of a term (whitespace runs folded to one space), cut on grapheme
 * boundaries so no character is split (`Text`).
 */
export const snippet = (text: string, queryTerms: ReadonlyArray<string>): string => {
  const kinds = termKinds(queryTerms)
  let at = -1
  for (const match of text.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu))
    if (kinds.words.includes(match[0])) {
      at = match.index
      break
    }
  for (const term of kinds.substrings) {
    const found = text.indexOf(term)
    if (found >= 0 && (at < 0 || found < at)) at = found
  }
  const start = Text.boundaryBefore(text, at - SNIPPET_CHARS / 4)
  const end = Text.boundaryBefore(text, start + SNIPPET_CHARS, start)
  const body = text.slice(start, end).replace(/\s+/g, " ").trim()
  return `${start > 0 ? "…" : ""}${body}${end < text.length ? "…" : ""}`
}

/**
 * The scan: the documents matching any term of the query, best first (`score`, then newest id first), at most `limit`.
 * The memory store's search, and the reference the SQL searches are tested against for which documents match.
 */
export const search = (docs: Iterable<Document>, query: string, limit: number = DEFAULT_LIMIT): Array<Hit> =>
  hitsOf(rank(docs, query, limit), query)

/** The documents matching any term of the query, ranked as the scan ranks them (`score`, then newest id first). */
export const rank = (docs: Iterable<Document>, query: string, limit: number = DEFAULT_LIMIT): Array<Document> => {
  const queryTerms = terms(query)
  if (queryTerms.length === 0 || limit <= 0) return []
  const scored: Array<{ readonly doc: Document; readonly score: number }> = []
  for (const doc of docs) {
    const s = score(doc, queryTerms)
    if (s > 0) scored.push({ doc, score: s })
  }
  scored.sort((a, b) => b.score - a.score || (a.doc.id < b.doc.id ? 1 : a.doc.id > b.doc.id ? -1 : 0))
  return scored.slice(0, limit).map(({ doc }) => doc)
}

const hitOf = (doc: Document, queryTerms: ReadonlyArray<string>): Hit => ({
  id: doc.id,
  kind: doc.kind,
  ...(doc.tool === undefined ? {} : { tool: doc.tool }),
  snippet: snippet(doc.text, queryTerms),
  chars: doc.text.length,
})

/** The hits of documents a full-text search ranked for a query, in its order. */
export const hitsOf = (ranked: ReadonlyArray<Document>, query: string): Array<Hit> => {
  const queryTerms = terms(query)
  return ranked.map((doc) => hitOf(doc, queryTerms))
}

// ── Answers

/** A slice of an original, within the bound. */
export interface Bounded {
  readonly text: string
  /** Whether characters after the slice were left out. */
  readonly truncated: boolean
  /** Where the slice ends in the original: the `offset` that continues it. */
  readonly end: number
}

/**
 * At most `maxChars` characters of `text` from `offset`, cut on grapheme boundaries (`Text`), so every slice is valid
 * text and no character is split between two pages; the whole text when it fits. An offset inside a surrogate pair
 * starts at that pair; a bound smaller than the first character still shows that one character, so paging advances.
 */
export const bound = (text: string, maxChars: number, offset = 0): Bounded => {
  // Only a pair is snapped to: a grapheme longer than the bound is paged by code points, so pages may start inside one.
  const from = Text.codePointBefore(text, offset)
  const max = Math.max(1, Math.floor(maxChars))
  let end = Text.boundaryBefore(text, from + max, from)
  if (end === from && from < text.length) end = Text.codePointAfter(text, from + 1)
  return { text: text.slice(from, end), truncated: end < text.length, end }
}

/** The line that ends a cut answer: how much was shown and how to read on. */
export const truncationNote = (id: string, b: Bounded, total: number): string =>
  `\n[Recall truncated: showed characters up to ${b.end} of ${total}; call context_recall with id ${id} and offset ${b.end} for more]`

/**
 * The tool result of a recall by id that found its document: the original (bounded), plus the note when cut; an
 * offset at or past the end of a non-empty original answers where the end is instead of an empty text.
 */
export const answerOriginal = (
  id: string,
  text: string,
  maxChars: number,
  offset = 0,
): Bounded & { readonly answer: string } => {
  const b = bound(text, maxChars, offset)
  if (offset > 0 && offset >= text.length)
    return {
      ...b,
      answer: `[Recall: offset ${offset} is at or past the end of ${id}, which has ${text.length} characters]`,
    }
  return { ...b, answer: b.truncated ? `${b.text}${truncationNote(id, b, text.length)}` : b.text }
}

const what = (h: Hit): string => (h.kind === "summary" ? "summary" : `${h.kind} of ${h.tool ?? "a tool"}`)

const hitLine = (h: Hit, i: number) => `${i + 1}. id ${h.id} (${what(h)}, ${h.chars} chars): ${h.snippet}`

/** The tool result of a query: a header, then one line per hit, best first, each naming the id to recall. */
export const answerHits = (query: string, hits: ReadonlyArray<Hit>): string =>
  hits.length === 0
    ? noMatch(query)
    : [
        `${hits.length} match${hits.length === 1 ? "" : "es"} for ${JSON.stringify(query)}, best first (pass an id to context_recall for the full text):`,
        ...hits.map(hitLine),
      ].join("\n")

/**
 * `answerHits` within `maxChars`: the best hits whose whole lines fit (the rest left out, and said so), so every id
 * shown is whole; cut as text only when not even the best hit fits.
 */
export const answerHitsWithin = (
  query: string,
  hits: ReadonlyArray<Hit>,
  maxChars: number,
): { readonly answer: string; readonly shown: ReadonlyArray<Hit>; readonly truncated: boolean } => {
  const full = answerHits(query, hits)
  if (full.length <= maxChars) return { answer: full, shown: hits, truncated: false }
  for (let n = hits.length - 1; n >= 1; n--) {
    const answer = `${answerHits(query, hits.slice(0, n))}\n[${hits.length - n} more match${hits.length - n === 1 ? "" : "es"} left out at the size bound]`
    if (answer.length <= maxChars) return { answer, shown: hits.slice(0, n), truncated: true }
  }
  const cut = bound(full, maxChars)
  return { answer: `${cut.text}\n[Recall truncated at ${maxChars} characters]`, shown: [], truncated: true }
}

/** The tool result of a query that matched nothing. */
export const noMatch = (query: string): string =>
  `No pruned output or earlier summary matches ${JSON.stringify(query)}.`

/** The tool result of an id that has the right shape but names nothing recallable. */
export const unknownId = (id: string): string =>
  `No pruned output or summary has recall id ${id}; use the id shown in a "[Old tool result content cleared — recall id: …]" placeholder or in a search result.`

/** The tool result of input that is not a recall: no id of the right shape, no query with a word in it. */
export const malformed = (detail: string): string =>
  `Invalid context_recall input: ${detail}. Pass {"id": "prt_…"} (from a placeholder or a search result) or {"query": "words to search for"}.`
