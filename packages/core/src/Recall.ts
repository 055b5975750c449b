/**
 * The rules of `context_recall`: what the model can re-read, how an id and a query are checked, how a query is split
 * into search terms and ranked (the scan every backend's full-text search must agree with on which documents match),
 * and how an answer is bounded and worded. Pure: the runtime reads the session and records the `ContextRecalled` event.
 *
 * Recallable documents are the outputs a prune cleared (by their part id, the id the placeholder names), the tool
 * inputs a prune cleared (by `Render.inputRecallId`, `prt_…-input`: the input as JSON, its keys in their stored order),
 * finished summaries (by their message id), and every part of every message a pivot summarised (its head, `pivotsOf`):
 * user and assistant text and reasoning by part id, a tool call's input by `prt_…-input` and its output or error by
 * the part id. pivot never deletes what it recorded, so the original comes back byte for byte; what record-time
 * redaction or crypto-shredding removed was never stored, so it never comes back.
 */
import * as HashMap from "effect/HashMap"
import * as Option from "effect/Option"
import * as Conversation from "./Conversation.ts"
import type { CompactionPlan } from "./Events.ts"
import * as Facts from "./Facts.ts"
import type { MessageId } from "./Ids.ts"
import { isFinishedSummary, type Message, summaryText } from "./Message.ts"
import { inputRecallId } from "./Render.ts"
import type * as Session from "./Session.ts"
import * as Text from "./Text.ts"

/** What a document is. */
export type Kind = "output" | "summary" | "user" | "assistant" | "reasoning" | "input"

/** One thing the model can re-read. */
export interface Document {
  /** The recall id: a part id (`prt_…-input` for a tool call's input, `Render.inputRecallId`), the message id of a summary. */
  readonly id: string
  readonly kind: Kind
  readonly messageId: string
  /** The tool of a tool call's input or output. */
  readonly tool?: string | undefined
  /** The summary id of the pivot whose summary stands for this document's message (`pivotsOf`), if one does. */
  readonly pivot?: string | undefined
  readonly text: string
}

/** A pivot: a finished compaction, numbered from 1 in order, with the messages its summary stands for (its head). */
export interface Pivot {
  readonly number: number
  readonly markerId: MessageId
  readonly summaryId: MessageId
  readonly head: ReadonlyArray<MessageId>
}

/** A compaction as the session fold and the compaction history keep it (both carry these fields). */
export interface CompactionLike {
  readonly markerId: MessageId
  readonly status: string
  readonly summaryId?: MessageId | undefined
  readonly plan?: CompactionPlan | undefined
}

/**
 * The pivots among compactions given in the order they were requested: those whose summary finished (`finished` or
 * `continued`, as `CompactionHistory.pivots`), numbered from 1.
 */
export const pivotsOf = (compactions: Iterable<CompactionLike>): Array<Pivot> => {
  const out: Array<Pivot> = []
  for (const c of compactions)
    if ((c.status === "finished" || c.status === "continued") && c.summaryId !== undefined)
      out.push({ number: out.length + 1, markerId: c.markerId, summaryId: c.summaryId, head: c.plan?.head ?? [] })
  return out
}

/**
 * The pivots of a folded session, in the order of their summaries in the conversation (`pivotsOf` over its
 * compactions). Reads every message: for a state that holds them all (not a retained live state).
 */
export const sessionPivots = (state: Session.State): Array<Pivot> => {
  const ordered: Array<CompactionLike> = []
  for (const message of Conversation.messages(state.window.conversation)) {
    if (message.role !== "assistant" || message.summary !== true) continue
    const c = Option.getOrUndefined(HashMap.get(state.compactions, message.parentId))
    if (c !== undefined && c.summaryId === message.id) ordered.push(c)
  }
  return pivotsOf(ordered)
}

/** Which pivot each summarised message fell behind: the first pivot whose head holds it (by summary id). */
export const behindMap = (pivots: Iterable<Pivot>): Map<MessageId, MessageId> => {
  const out = new Map<MessageId, MessageId>()
  for (const p of pivots) for (const id of p.head) if (!out.has(id)) out.set(id, p.summaryId)
  return out
}

const partDocuments = (message: Message, pivot: string): Array<Document> => {
  const out: Array<Document> = []
  const base = { messageId: message.id, pivot }
  for (const part of message.parts) {
    if (part.type === "text" && part.text !== "")
      out.push({ ...base, id: part.id, kind: message.role === "user" ? "user" : "assistant", text: part.text })
    else if (part.type === "reasoning" && part.text !== "")
      out.push({ ...base, id: part.id, kind: "reasoning", text: part.text })
    else if (part.type === "tool") {
      out.push({
        ...base,
        id: inputRecallId(part.id),
        kind: "input",
        tool: part.tool,
        text: JSON.stringify(part.state.input),
      })
      const result =
        part.state.status === "completed"
          ? part.state.output
          : part.state.status === "error"
            ? part.state.error
            : undefined
      if (result !== undefined) out.push({ ...base, id: part.id, kind: "output", tool: part.tool, text: result })
    }
  }
  return out
}

/**
 * The recallable documents one stored message holds: itself when it is a finished summary; every text, reasoning,
 * tool input and tool result of it when a pivot summarised it (`pivot`, the pivot's summary id); else its pruned
 * outputs.
 */
export const documentsOf = (message: Message, pivot?: string | undefined): Array<Document> => {
  if (message.role === "assistant" && message.summary === true) {
    const text = isFinishedSummary(message) ? summaryText(message) : undefined
    return text === undefined ? [] : [{ id: message.id, kind: "summary", messageId: message.id, text }]
  }
  if (pivot !== undefined) return partDocuments(message, pivot)
  if (message.role !== "assistant") return []
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

/**
 * A message's documents as the window shows it (a pinned message kept after a pivot): its text, reasoning, tool inputs
 * and results as `documentsOf` gives them behind a pivot, less a tool input or output that was cleared (the window
 * shows a placeholder in its place; `context_recall` still gives it back).
 */
export const shownDocumentsOf = (message: Message): Array<Document> => {
  const cleared = new Set<string>()
  for (const part of message.parts) {
    if (part.type !== "tool") continue
    const state = part.state
    if ((state.status === "completed" || state.status === "error") && state.inputClearedAt !== undefined)
      cleared.add(inputRecallId(part.id))
    if (state.status === "completed" && state.compactedAt !== undefined) cleared.add(part.id)
  }
  return partDocuments(message, "").flatMap(({ pivot: _pivot, ...doc }) => (cleared.has(doc.id) ? [] : [doc]))
}

/** The recallable document with this id in a message, if there is one. */
export const documentIn = (message: Message, id: string, pivot?: string | undefined): Document | undefined =>
  documentsOf(message, pivot).find((d) => d.id === id)

/**
 * Every recallable document of a conversation, in the order of its messages; `behind` says which pivot summarised
 * which message (`behindMap`), none when absent.
 */
export const documents = (
  messages: Iterable<Message>,
  behind: ReadonlyMap<MessageId, MessageId> = new Map(),
): Array<Document> => {
  const out: Array<Document> = []
  for (const message of messages) out.push(...documentsOf(message, behind.get(message.id)))
  return out
}

// ── The tool as the model sees it

/** The `context_recall` tool's description: the same words in the AI SDK tool, the OpenCode plugin and MCP. */
export const TOOL_DESCRIPTION =
  "Get back, word for word, anything that left your context: earlier user and assistant messages, reasoning, tool " +
  "calls and their outputs that a summary replaced, tool outputs that were cleared, earlier summaries. Search with " +
  "`query` (words to look for) for ranked snippets with their ids and the pivot each fell behind; pass an `id` (from " +
  'a search result, a pivot\'s list or a "[Old tool result content cleared — recall id: …]" placeholder) for the ' +
  "exact original; pass `pivot` (a number; none, with no id nor query: the latest) to list what a summary replaced: " +
  "its messages with their ids and sizes, and the files, commands and errors in them. Check there before you guess. " +
  "Long originals are cut; the note says which `offset` reads on."

/** What each argument of `context_recall` means, as the model reads it. */
export const ARG_DESCRIPTIONS = {
  id: "A recall id: prt_… (a part or a tool output), prt_…-input (a tool call's input) or msg_… (a summary).",
  query: "Words to search for in everything before a pivot, cleared tool outputs and earlier summaries.",
  offset: "With id: the character to start from (read on).",
  pivot: "List what this pivot (1 = the first) summarised; 0 or none, with no id nor query: the latest.",
} as const

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
/**
 * Whether a string has the shape of a recall id (`prt_…`, `prt_…-input` or `msg_…`); says nothing of whether it exists.
 */
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
  /** The number of the pivot whose summary stands for it, if one does. */
  readonly pivot?: number | undefined
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
export const search = (
  docs: Iterable<Document>,
  query: string,
  limit: number = DEFAULT_LIMIT,
  numbers: ReadonlyMap<string, number> = new Map(),
): Array<Hit> => hitsOf(rank(docs, query, limit), query, numbers)

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

const hitOf = (doc: Document, queryTerms: ReadonlyArray<string>, numbers: ReadonlyMap<string, number>): Hit => ({
  id: doc.id,
  kind: doc.kind,
  ...(doc.tool === undefined ? {} : { tool: doc.tool }),
  ...(doc.pivot === undefined || !numbers.has(doc.pivot) ? {} : { pivot: numbers.get(doc.pivot)! }),
  snippet: snippet(doc.text, queryTerms),
  chars: doc.text.length,
})

/**
 * The hits of documents a full-text search ranked for a query, in its order; `numbers` gives each pivot's number by
 * its summary id (`pivotNumbers`).
 */
export const hitsOf = (
  ranked: ReadonlyArray<Document>,
  query: string,
  numbers: ReadonlyMap<string, number> = new Map(),
): Array<Hit> => {
  const queryTerms = terms(query)
  return ranked.map((doc) => hitOf(doc, queryTerms, numbers))
}

/** Each pivot's number by its summary id. */
export const pivotNumbers = (pivots: Iterable<Pivot>): Map<string, number> =>
  new Map([...pivots].map((p) => [p.summaryId, p.number]))

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

/** How a hit names what it is: `user text`, `output of bash`, `input of read`, `summary`… */
export const kindLabel = (kind: Kind, tool?: string | undefined): string => {
  switch (kind) {
    case "output":
      return `output of ${tool ?? "a tool"}`
    case "input":
      return `input of ${tool ?? "a tool"}`
    case "user":
      return "user text"
    case "assistant":
      return "assistant text"
    case "reasoning":
      return "reasoning"
    case "summary":
      return "summary"
  }
}

const hitLine = (h: Hit, i: number) =>
  `${i + 1}. id ${h.id} (${kindLabel(h.kind, h.tool)}${h.pivot === undefined ? "" : `, behind pivot #${h.pivot}`}, ${h.chars} chars): ${h.snippet}`

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
  `Nothing before a pivot, no pruned output and no earlier summary matches ${JSON.stringify(query)}.`

/** The tool result of an id that has the right shape but names nothing recallable. */
export const unknownId = (id: string): string =>
  `Nothing recallable has id ${id}; use the id shown in a "[Old tool result content cleared — recall id: …]" placeholder, in a search result or in a pivot's list.`

/** The tool result of input that is not a recall: no id of the right shape, no query with a word in it. */
export const malformed = (detail: string): string =>
  `Invalid context_recall input: ${detail}. Pass {"id": "prt_…"} (from a placeholder, a search result or a pivot's list), {"query": "words to search for"}, or {"pivot": 2} (none: the latest) to list what a pivot summarised.`

// ── What a pivot dropped

/** One message a pivot summarised: its id, role, size, and the recall ids of its parts. */
export interface DroppedMessage {
  readonly id: MessageId
  readonly role: Message["role"]
  /** Characters of everything recallable in it (the sum of its documents). */
  readonly chars: number
  readonly documents: ReadonlyArray<{
    readonly id: string
    readonly kind: Kind
    readonly tool?: string | undefined
    readonly chars: number
  }>
}

/** What a pivot's summary stands for: the messages of its head, in order, the facts in them, and their size. */
export interface Dropped {
  readonly pivot: Pivot
  readonly messages: ReadonlyArray<DroppedMessage>
  /** Files read and edited, commands and errors in those messages (`Facts.facts`). */
  readonly facts: Facts.Facts
  /** Characters of all their documents. */
  readonly chars: number
}

/**
 * What `pivot` dropped from the window: every message of its head (the messages the summariser was given to
 * summarise) that `get` finds, with its documents and sizes, and the facts in them.
 */
export const dropped = (
  pivot: Pivot,
  get: (id: MessageId) => Message | undefined,
  tools: Facts.Tools = Facts.OPENCODE_TOOLS,
): Dropped => {
  const held: Array<Message> = []
  for (const id of pivot.head) {
    const message = get(id)
    if (message !== undefined) held.push(message)
  }
  const messages = held.map((message): DroppedMessage => {
    const docs = documentsOf(message, pivot.summaryId).map((d) => ({
      id: d.id,
      kind: d.kind,
      ...(d.tool === undefined ? {} : { tool: d.tool }),
      chars: d.text.length,
    }))
    return { id: message.id, role: message.role, chars: docs.reduce((n, d) => n + d.chars, 0), documents: docs }
  })
  return {
    pivot,
    messages,
    facts: Facts.facts(held, tools),
    chars: messages.reduce((n, m) => n + m.chars, 0),
  }
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`

/** The lines of a facts list (`- label: a, b`), none for an empty list. */
const factLines = (facts: Facts.Facts): Array<string> => {
  const lines: Array<string> = []
  const list = (label: string, items: ReadonlyArray<string>) => {
    if (items.length > 0) lines.push(`- ${label}: ${items.join(", ")}`)
  }
  list("files read", facts.filesRead)
  list("files edited", facts.filesEdited)
  list(
    "commands",
    facts.commands.map(
      (c) => `${c.command}${c.failed ? ` (failed${c.exitCode === undefined ? "" : `, exit ${c.exitCode}`})` : ""}`,
    ),
  )
  list("errors", facts.errors)
  return lines
}

/** The tool result listing what a pivot dropped: each message with the recall ids and sizes of its parts, then facts. */
export const droppedText = (d: Dropped): string => {
  const lines = [
    `Pivot #${d.pivot.number} (summary ${d.pivot.summaryId}) summarised ${plural(d.messages.length, "message")}, ${plural(d.chars, "char")} (pass an id to context_recall for the original):`,
  ]
  for (const m of d.messages)
    lines.push(
      `- ${m.id} (${m.role}, ${plural(m.chars, "char")})${m.documents.length === 0 ? ": nothing to recall" : `: ${m.documents.map((doc) => `${doc.id} (${kindLabel(doc.kind, doc.tool)}, ${doc.chars})`).join(", ")}`}`,
    )
  const facts = factLines(d.facts)
  if (facts.length > 0) lines.push("In them:", ...facts)
  return lines.join("\n")
}

/** The tool result of a pivot number the session does not have. */
export const noPivot = (pivot: number, count: number): string =>
  count === 0
    ? "This session has no pivot yet: nothing was summarised."
    : `No pivot #${pivot}: the session has ${plural(count, "pivot")} (1 to ${count}).`
