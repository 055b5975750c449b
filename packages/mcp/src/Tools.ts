/**
 * The answers of pivot's MCP tools, as pure functions of a session's events: `context_recall` (search what left the
 * window, list what a pivot dropped, page through an original) and `context_usage` (what the session's calls cost,
 * cache reads and writes as billed). Nothing here writes: the MCP server is read-only.
 *
 * Recall reads what core's `Recall` reads: pruned outputs, finished summaries and everything a pivot dropped from the
 * window (the text, reasoning, tool inputs and outputs of each message of a pivot's head, by part id). That is what
 * an agent whose own compaction dropped it (Claude Code, Codex CLI, imported or followed by pivot) can get back.
 */
import { Conversation, type Events, Recall, Session, Text, Tokens } from "@pivot/core"

/** A request of `context_recall`. */
export interface RecallRequest {
  readonly id?: string | undefined
  readonly query?: string | undefined
  readonly offset?: number | undefined
  /** List what pivot number `pivot` (from 1; 0: the latest) dropped. */
  readonly pivot?: number | undefined
}

/** The session's pivots in order, with the head each summarised (`Recall.sessionPivots`). */
export const pivots = (events: ReadonlyArray<Events.Event>): Array<Recall.Pivot> =>
  Recall.sessionPivots(Session.fold(events))

/** Every document recall reads (`Recall.documents`): pruned outputs, summaries, every part of what a pivot dropped. */
export const documents = (events: ReadonlyArray<Events.Event>): Array<Recall.Document> => {
  const state = Session.fold(events)
  return Recall.documents(
    Conversation.messages(state.window.conversation),
    Recall.behindMap(Recall.sessionPivots(state)),
  )
}

/** Answers `context_recall`: an original by id (paged with `offset`), a search, or what a pivot dropped. */
export const recall = (
  events: ReadonlyArray<Events.Event>,
  request: RecallRequest,
  maxChars: number = Recall.DEFAULT_MAX_CHARS,
): { readonly text: string; readonly found: ReadonlyArray<string>; readonly truncated: boolean } => {
  const state = Session.fold(events)
  const all = Recall.sessionPivots(state)
  const id = typeof request.id === "string" && request.id.trim() !== "" ? request.id.trim() : undefined
  const offset = request.offset ?? 0
  if (id === undefined && request.query === undefined) {
    const pivot = request.pivot ?? 0
    const chosen = Number.isInteger(pivot) && pivot >= 0 ? all[(pivot === 0 ? all.length : pivot) - 1] : undefined
    if (chosen === undefined) return { text: Recall.noPivot(pivot, all.length), found: [], truncated: false }
    const list = Recall.dropped(chosen, (m) => Conversation.get(state.window.conversation, m))
    const b = Recall.bound(Recall.droppedText(list), maxChars)
    return {
      text: b.truncated ? `${b.text}\n[Recall truncated at ${maxChars} characters]` : b.text,
      found: list.messages.map((m) => m.id),
      truncated: b.truncated,
    }
  }
  if (!Number.isInteger(offset) || offset < 0)
    return { text: Recall.malformed(`offset ${String(offset)} is not a whole number ≥ 0`), found: [], truncated: false }
  const docs = Recall.documents(Conversation.messages(state.window.conversation), Recall.behindMap(all))
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
  const hits = Recall.search(docs, query, Recall.DEFAULT_LIMIT, Recall.pivotNumbers(all))
  const within = Recall.answerHitsWithin(query, hits, maxChars)
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

const n = (x: number) => Text.thousands(x)

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
