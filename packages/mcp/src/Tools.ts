/**
 * The answers of pivot's MCP tools, as pure functions of a session's events: `context_recall` (search what left the
 * window, list what a pivot dropped, page through an original) and `context_usage` (what the session's calls cost,
 * cache reads and writes as billed). Nothing here writes: the MCP server is read-only.
 *
 * Recall reads what core's `Recall` reads (pruned outputs and finished summaries) and, beyond it, everything a pivot
 * dropped from the window: the text and tool outputs of each message of a pivot's head, by part id. That is what an
 * agent whose own compaction dropped it (Claude Code, Codex CLI, imported or followed by pivot) can get back.
 */
import { Conversation, type Events, type Ids, type Message, Recall, Session, Tokens } from "@pivot/core"

/** A request of `context_recall`. */
export interface RecallRequest {
  readonly id?: string | undefined
  readonly query?: string | undefined
  readonly offset?: number | undefined
  /** List what pivot number `pivot` (from 1) dropped. */
  readonly pivot?: number | undefined
}

/** A pivot of the session: its marker, summary and the messages it dropped. */
export interface Pivot {
  readonly number: number
  readonly at: number
  readonly markerId: string
  readonly summaryId: string
  readonly dropped: ReadonlyArray<Message.Message>
}

/** The session's pivots in order: each finished compaction with the head its plan summarised. */
export const pivots = (events: ReadonlyArray<Events.Event>): Array<Pivot> => {
  const state = Session.fold(events)
  const conversation = state.window.conversation
  const heads = new Map<string, ReadonlyArray<string>>()
  const out: Array<Pivot> = []
  for (const event of events) {
    if (event._tag === "CompactionStarted") heads.set(event.markerId, event.plan.head)
    if (event._tag === "SummaryFinished") {
      const head = heads.get(event.markerId) ?? []
      out.push({
        number: out.length + 1,
        at: event.at,
        markerId: event.markerId,
        summaryId: event.summary.id,
        dropped: head.flatMap((id) => {
          const message = Conversation.get(conversation, id as Ids.MessageId)
          return message === undefined ? [] : [message]
        }),
      })
    }
  }
  return out
}

/** The recallable documents of a message a pivot dropped: its texts and tool outputs, by part id. */
const droppedDocuments = (message: Message.Message): Array<Recall.Document> =>
  (message.parts as ReadonlyArray<Message.UserPart | Message.AssistantPart>).flatMap((part): Array<Recall.Document> => {
    if (part.type === "text" && part.text !== "")
      return [{ id: part.id, kind: "output", messageId: message.id, tool: `${message.role} message`, text: part.text }]
    if (part.type === "reasoning" && part.text !== "")
      return [{ id: part.id, kind: "output", messageId: message.id, tool: "reasoning", text: part.text }]
    if (part.type === "tool" && part.state.status === "completed")
      return [{ id: part.id, kind: "output", messageId: message.id, tool: part.tool, text: part.state.output }]
    if (part.type === "tool" && part.state.status === "error")
      return [{ id: part.id, kind: "output", messageId: message.id, tool: part.tool, text: part.state.error }]
    return []
  })

/** Every document recall reads: core's (pruned outputs, summaries), then what the pivots dropped, each id once. */
export const documents = (events: ReadonlyArray<Events.Event>): Array<Recall.Document> => {
  const state = Session.fold(events)
  const seen = new Set<string>()
  const out: Array<Recall.Document> = []
  const add = (doc: Recall.Document) => {
    if (seen.has(doc.id)) return
    seen.add(doc.id)
    out.push(doc)
  }
  for (const message of Conversation.messages(state.window.conversation))
    for (const d of Recall.documentsOf(message)) add(d)
  for (const pivot of pivots(events))
    for (const message of pivot.dropped) for (const d of droppedDocuments(message)) add(d)
  return out
}

const chars = (n: number) => `${n} char${n === 1 ? "" : "s"}`

/** The listing of what one pivot dropped: each message with the recall ids of its parts. */
const listing = (pivot: Pivot): string => {
  const lines = [
    `Pivot #${pivot.number} (marker ${pivot.markerId}, summary ${pivot.summaryId}, recall the summary by its id) dropped ${pivot.dropped.length} message${pivot.dropped.length === 1 ? "" : "s"}:`,
  ]
  for (const message of pivot.dropped) {
    const docs = droppedDocuments(message)
    lines.push(
      `- ${message.id} (${message.role})${docs.length === 0 ? ": nothing to recall" : `: ${docs.map((d) => `${d.id} (${d.tool}, ${chars(d.text.length)})`).join(", ")}`}`,
    )
  }
  return lines.join("\n")
}

/** Answers `context_recall`: an original by id (paged with `offset`), a search, or what a pivot dropped. */
export const recall = (
  events: ReadonlyArray<Events.Event>,
  request: RecallRequest,
  maxChars: number = Recall.DEFAULT_MAX_CHARS,
): { readonly text: string; readonly found: ReadonlyArray<string>; readonly truncated: boolean } => {
  if (request.pivot !== undefined) {
    const all = pivots(events)
    const pivot = all[request.pivot - 1]
    if (!Number.isInteger(request.pivot) || pivot === undefined)
      return {
        text:
          all.length === 0
            ? "This session has no pivot: its agent never compacted it."
            : `No pivot #${request.pivot}: the session has ${all.length} (1 to ${all.length}).`,
        found: [],
        truncated: false,
      }
    return { text: listing(pivot), found: pivot.dropped.map((m) => m.id), truncated: false }
  }
  const id = typeof request.id === "string" && request.id.trim() !== "" ? request.id.trim() : undefined
  const offset = request.offset ?? 0
  if (id === undefined && request.query === undefined)
    return { text: Recall.malformed("neither an id, a query nor a pivot"), found: [], truncated: false }
  if (!Number.isInteger(offset) || offset < 0)
    return { text: Recall.malformed(`offset ${String(offset)} is not a whole number ≥ 0`), found: [], truncated: false }
  const docs = documents(events)
  if (id !== undefined) {
    if (!Recall.isRecallId(id))
      return {
        text: Recall.malformed(`${JSON.stringify(id.slice(0, 80))} is not a recall id`),
        found: [],
        truncated: false,
      }
    const doc = docs.find((d) => d.id === id)
    if (doc === undefined) return { text: Recall.unknownId(id), found: [], truncated: false }
    const original = Recall.answerOriginal(id, doc.text, maxChars, offset)
    return { text: original.answer, found: [id], truncated: original.truncated }
  }
  const query = request.query!
  if (Recall.terms(query).length === 0)
    return { text: Recall.malformed("the query has no word to search for"), found: [], truncated: false }
  const within = Recall.answerHitsWithin(query, Recall.search(docs, query, Recall.DEFAULT_LIMIT), maxChars)
  return { text: within.answer, found: within.shown.map((h) => h.id), truncated: within.truncated }
}

/** What the session's model calls used, as billed. */
export interface UsageFigures {
  readonly calls: number
  readonly input: number
  readonly output: number
  readonly reasoning: number
  readonly cacheRead: number
  readonly cacheWrite: number
  /** The context the last call was sent (input, cache reads and writes, output). */
  readonly lastContext: number | undefined
  readonly pivots: number
}

/** Sums the usage of every model call of the session (summaries included when their call was recorded). */
export const usageFigures = (events: ReadonlyArray<Events.Event>): UsageFigures => {
  let calls = 0
  const sum = { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 }
  let lastContext: number | undefined
  let pivotCount = 0
  for (const event of events) {
    const message =
      event._tag === "AssistantStepRecorded" || event._tag === "ProviderErrorReported"
        ? event.message
        : event._tag === "SummaryFinished" || event._tag === "SummaryFailed"
          ? event.summary
          : undefined
    if (event._tag === "SummaryFinished") pivotCount++
    if (message === undefined) continue
    const t = message.tokens
    if (t.input + t.output + t.reasoning + t.cacheRead + t.cacheWrite === 0) continue
    calls++
    sum.input += t.input
    sum.output += t.output
    sum.reasoning += t.reasoning
    sum.cacheRead += t.cacheRead
    sum.cacheWrite += t.cacheWrite
    if (event._tag === "AssistantStepRecorded") lastContext = Tokens.contextCount(t)
  }
  return { calls, ...sum, lastContext, pivots: pivotCount }
}

const n = (x: number) => Math.round(x).toLocaleString("en-US")

/** Answers `context_usage`: the session's calls, tokens as billed, cache hit ratio, pivots. */
export const usage = (sessionId: string, events: ReadonlyArray<Events.Event>): string => {
  const u = usageFigures(events)
  const prompt = u.input + u.cacheRead + u.cacheWrite
  return [
    `Session ${sessionId}: ${u.calls} model call${u.calls === 1 ? "" : "s"} with usage, ${u.pivots} pivot${u.pivots === 1 ? "" : "s"}.`,
    `Input ${n(u.input)} uncached, ${n(u.cacheRead)} read from the cache, ${n(u.cacheWrite)} written to the cache; output ${n(u.output)} (+ ${n(u.reasoning)} reasoning).`,
    `Cache hit ratio ${prompt === 0 ? "n/a" : `${Math.round((100 * u.cacheRead) / prompt)}%`} of prompt tokens.`,
    `Last call's context: ${u.lastContext === undefined ? "no call reported usage yet" : `${n(u.lastContext)} tokens`}.`,
  ].join("\n")
}
