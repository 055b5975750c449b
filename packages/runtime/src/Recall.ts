/**
 * `context_recall` in the runtime: reads the session (and, on a SQL store, its full-text read model), answers with
 * core's `Recall` rules, and records a `ContextRecalled` event so an audit shows what the model re-read.
 *
 * What is written: a recall that reached the session's data is recorded, hit or miss (`found: []` for an unknown id or
 * a query that matched nothing: the model's attempt is part of the audit). Input that is not a recall — no id of the
 * right shape, a query without a word, a negative offset — and a session that never started write nothing.
 */
import { Conversation, Recall, Redaction, Retention, Text, Traced } from "@pivot/core"
import type { ReadModels } from "@pivot/store"
import { Clock, type Effect } from "effect"
import type { ExecuteError, SessionsShape } from "./Sessions.ts"

/** What the model asks: an id (from a placeholder or a search result), or a query. */
export interface Request {
  /**
   * The recall id: a part id (`prt_…-input` for a tool call's input) or a summary's message id. Wins over `query`
   * and `pivot` when given.
   */
  readonly id?: string | undefined
  /** Words to search everything before a pivot, pruned outputs and summaries for. Wins over `pivot`. */
  readonly query?: string | undefined
  /** With `id`: where to start in the original (to read on after a truncated answer). */
  readonly offset?: number | undefined
  /** List what this pivot (numbered from 1; 0 or absent with no id nor query: the latest) dropped. */
  readonly pivot?: number | undefined
}

/** The answer: the tool result text, and what it gave back. */
export interface Recalled {
  /** The tool result for the model. */
  readonly text: string
  /** The ids the answer gave back, best first (empty: a miss or bad input). */
  readonly found: ReadonlyArray<string>
  /** Whether the answer was cut at `maxChars`. */
  readonly truncated: boolean
  /** Whether a `ContextRecalled` event was recorded. */
  readonly recorded: boolean
}

/** Settings of recall (`ContextManager` option `recall`). */
export interface Options {
  /** The most characters one answer gives; default `Recall.DEFAULT_MAX_CHARS`. */
  readonly maxChars?: number | undefined
  /** The most hits a query answers; default `Recall.DEFAULT_LIMIT`. */
  readonly limit?: number | undefined
  /**
   * Store the query with its secrets redacted (`[REDACTED:<kind>]`), as summaries are (the search still uses the
   * query as given); default true. The `ContextManager` option `redactSecrets` sets it.
   */
  readonly redactSecrets?: boolean | undefined
}

/** A full-text search over a session's recallable documents, best first (the SQL read model's). */
export type Search = (
  sessionId: string,
  query: string,
  limit: number,
) => Effect.Effect<ReadonlyArray<Recall.Document>, ReadModels.ReadModelError>

/** Why a recall failed (the store, never the model's input). */
export type RecallError = ExecuteError | ReadModels.ReadModelError

const unrecorded = (text: string): Recalled => ({ text, found: [], truncated: false, recorded: false })

/**
 * The recall operation over a session handler, searching with `search` when given (a SQL store) and by scanning the
 * folded conversation otherwise (the memory store).
 */
export const make = (
  sessions: SessionsShape,
  search: Search | undefined,
  options: Options = {},
): ((sessionId: string, request: Request) => Effect.Effect<Recalled, RecallError>) => {
  const maxChars = Math.max(1, Math.floor(options.maxChars ?? Recall.DEFAULT_MAX_CHARS))
  const limit = Math.max(1, Math.floor(options.limit ?? Recall.DEFAULT_LIMIT))
  const stored = (query: string) => (options.redactSecrets === false ? query : Redaction.redact(query).text)

  return Traced.fn("Recall.recall")(function* (sessionId: string, request: Request) {
    const id = typeof request.id === "string" && request.id.trim() !== "" ? request.id.trim() : undefined
    const query = typeof request.query === "string" ? request.query : undefined
    const offset = request.offset ?? 0
    const pivot = id === undefined && query === undefined ? (request.pivot ?? 0) : undefined
    if (pivot !== undefined && (!Number.isInteger(pivot) || pivot < 0))
      return unrecorded(Recall.malformed(`pivot ${String(pivot)} is not a whole number ≥ 0`))
    if (id !== undefined && !Recall.isRecallId(id))
      return unrecorded(Recall.malformed(`${JSON.stringify(Text.clip(id, 80))} is not a recall id`))
    if (!Number.isInteger(offset) || offset < 0)
      return unrecorded(Recall.malformed(`offset ${String(offset)} is not a whole number ≥ 0`))
    if (id === undefined && query !== undefined && Recall.terms(query).length === 0)
      return unrecorded(Recall.malformed("the query has no word to search for"))

    const state = yield* sessions.load(sessionId)
    if (state.session.sessionId === undefined)
      return unrecorded(
        id !== undefined
          ? Recall.unknownId(id)
          : query !== undefined
            ? Recall.noMatch(query)
            : Recall.noPivot(pivot!, 0),
      )

    // A live state may have dropped old messages (bounded memory): recall reads them from the whole log then.
    const all = Retention.retiredCount(state.session) > 0 ? (yield* sessions.history(sessionId)).session : state.session
    const pivots = Recall.sessionPivots(all)
    const behind = Recall.behindMap(pivots)
    const messages = () => Conversation.messages(all.window.conversation)
    let answer: Omit<Recalled, "recorded">
    if (pivot !== undefined) {
      const chosen = pivots[(pivot === 0 ? pivots.length : pivot) - 1]
      if (chosen === undefined) answer = { text: Recall.noPivot(pivot, pivots.length), found: [], truncated: false }
      else {
        const list = Recall.dropped(chosen, (m) => Conversation.get(all.window.conversation, m))
        const within = Recall.bound(Recall.droppedText(list), maxChars)
        answer = {
          text: within.truncated ? `${within.text}\n[Recall truncated at ${maxChars} characters]` : within.text,
          found: list.messages.map((m) => m.id),
          truncated: within.truncated,
        }
      }
    } else if (id !== undefined) {
      const doc = Recall.documents(messages(), behind).find((d) => d.id === id)
      if (doc === undefined) answer = { text: Recall.unknownId(id), found: [], truncated: false }
      else {
        const original = Recall.answerOriginal(id, doc.text, maxChars, offset)
        answer = { text: original.answer, found: [id], truncated: original.truncated }
      }
    } else {
      const numbers = Recall.pivotNumbers(pivots)
      const hits =
        search === undefined
          ? Recall.search(Recall.documents(messages(), behind), query!, limit, numbers)
          : Recall.hitsOf(yield* search(sessionId, query!, limit), query!, numbers)
      const within = Recall.answerHitsWithin(query!, hits, maxChars)
      answer = { text: within.answer, found: within.shown.map((h) => h.id), truncated: within.truncated }
    }
    const at = yield* Clock.currentTimeMillis
    yield* sessions.execute(sessionId, {
      _tag: "Record",
      events: [
        {
          _tag: "ContextRecalled",
          at,
          ...(id !== undefined ? { id } : query !== undefined ? { query: stored(query) } : { pivot: pivot! }),
          ...(id !== undefined && offset > 0 ? { offset } : {}),
          found: answer.found,
          chars: answer.text.length,
          truncated: answer.truncated,
        },
      ],
    })
    return { ...answer, recorded: true } satisfies Recalled
  })
}
