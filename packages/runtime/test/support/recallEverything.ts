/**
 * Issue 31's property, run on each store (memory, SQLite in the fast lane; PostgreSQL in the slow lane): for every
 * message before every pivot of a generated session, `context_recall` gives each of its parts back byte for byte, and
 * searching a word only that part holds (a Latin word, or a CJK run) finds it, naming its pivot.
 *
 * Generated sessions (core's generator, run through the Decider) get a distinctive Latin word and CJK run at the
 * start of every text, reasoning, tool output and error. Which messages fell behind which pivot is read from the
 * events directly (every `SummaryFinished` with the head its `CompactionStarted` planned, the first pivot of a message
 * wins), not from `Recall`.
 */
import type { Events } from "@pivot/core"
import type { ContextManager } from "@pivot/runtime"
import { Effect } from "effect"
import { expect } from "vitest"
import { services } from "./harness.ts"

const HAN = "〇一二三四五六七八九"

/** The distinctive words a part's texts start with: `zq<digits of its id>` and a Han run spelling the digits. */
export const wordsOf = (partId: string): { readonly latin: string; readonly cjk: string } => {
  const digits = partId.replace(/\D/g, "")
  return { latin: `zq${digits}`, cjk: `标${[...digits].map((d) => HAN[Number(d)]).join("")}` }
}

const mark = (partId: string, text: string) => {
  const w = wordsOf(partId)
  return `${w.latin} ${w.cjk}\r\n\t${text}`
}

const markState = (partId: string, state: Record<string, unknown>): Record<string, unknown> =>
  state.status === "completed"
    ? { ...state, output: mark(partId, state.output as string) }
    : state.status === "error"
      ? { ...state, error: mark(partId, state.error as string) }
      : state

const markPart = (part: Record<string, unknown>): Record<string, unknown> => {
  const id = part.id as string
  if ((part.type === "text" || part.type === "reasoning") && typeof part.text === "string")
    return { ...part, text: mark(id, part.text) }
  if (part.type === "tool") return { ...part, state: markState(id, part.state as Record<string, unknown>) }
  return part
}

const markMessage = (message: { readonly parts: ReadonlyArray<unknown>; readonly summary?: boolean }) =>
  message.summary === true
    ? message
    : { ...message, parts: message.parts.map((p) => markPart(p as Record<string, unknown>)) }

/** The events with every conversational text marked (summaries left as written), under `sessionId`. */
export const marked = (events: ReadonlyArray<Events.Event>, sessionId: string): Array<Events.Event> =>
  events.map((event) => {
    const e = event as unknown as Record<string, unknown>
    if (event._tag === "SessionStarted") return { ...event, sessionId } as Events.Event
    if (event._tag === "ToolResultRecorded")
      return { ...e, state: markState(event.partId, e.state as Record<string, unknown>) } as unknown as Events.Event
    for (const key of ["message", "marker"] as const)
      if (typeof e[key] === "object" && e[key] !== null)
        return { ...e, [key]: markMessage(e[key] as { parts: ReadonlyArray<unknown> }) } as unknown as Events.Event
    return event
  })

/** One part a pivot summarised, as the events say, with what recall must give back for it. */
export interface Expected {
  readonly id: string
  readonly text: string
  readonly pivot: number
  readonly word: string
}

/**
 * The reference: for each `SummaryFinished`, numbered from 1, the messages its `CompactionStarted` planned to
 * summarise (a message listed twice belongs to its first pivot); of each, every non-empty text and reasoning, and
 * every tool call's input (as JSON) and result, with the last text the events gave it.
 */
export const expected = (events: ReadonlyArray<Events.Event>): Array<Expected> => {
  const heads = new Map<string, ReadonlyArray<string>>()
  const pivotOf = new Map<string, number>()
  let pivots = 0
  // By message id: its parts' recallable texts by recall id, and whether each has a distinctive word.
  const docs = new Map<string, Map<string, { readonly text: string; readonly searchable: boolean }>>()
  const set = (messageId: string, id: string, text: string, searchable: boolean) => {
    if (!docs.has(messageId)) docs.set(messageId, new Map())
    docs.get(messageId)!.set(id, { text, searchable })
  }
  for (const event of events) {
    if (event._tag === "CompactionStarted") heads.set(event.markerId, event.plan.head)
    if (event._tag === "SummaryFinished") {
      pivots++
      for (const id of heads.get(event.markerId) ?? []) if (!pivotOf.has(id)) pivotOf.set(id, pivots)
    }
    if (event._tag === "ToolResultRecorded") {
      const s = event.state
      set(event.messageId, event.partId, s.status === "completed" ? s.output : s.error, true)
    }
    const message =
      event._tag === "UserMessageAdded" ||
      event._tag === "AssistantStepRecorded" ||
      event._tag === "TurnReplayed" ||
      event._tag === "ContinueRequested" ||
      event._tag === "ProviderErrorReported"
        ? event.message
        : undefined
    if (message === undefined || (message.role === "assistant" && message.summary === true)) continue
    for (const part of message.parts) {
      if ((part.type === "text" || part.type === "reasoning") && part.text !== "")
        set(message.id, part.id, part.text, true)
      if (part.type === "tool") {
        set(message.id, `${part.id}-input`, JSON.stringify(part.state.input), false)
        if (part.state.status === "completed") set(message.id, part.id, part.state.output, true)
        if (part.state.status === "error") set(message.id, part.id, part.state.error, true)
      }
    }
  }
  const out: Array<Expected> = []
  for (const [messageId, pivot] of pivotOf)
    for (const [id, doc] of docs.get(messageId) ?? [])
      out.push({ id, text: doc.text, pivot, word: doc.searchable ? wordsOf(id).latin : "" })
  return out
}

/** Checks recall against the reference for one session already in the store. */
export const check = (sessionId: string, events: ReadonlyArray<Events.Event>) =>
  Effect.gen(function* () {
    const { cm } = yield* services
    const want = expected(events)
    for (const e of want) {
      const byId = yield* cm.recall(sessionId, { id: e.id })
      expect(byId.text).toBe(e.text)
      if (e.word === "") continue
      const cjk = wordsOf(e.id).cjk
      for (const query of [e.word, cjk]) {
        const hits = yield* cm.recall(sessionId, { query })
        expect(hits.found).toContain(e.id)
        expect(hits.text).toContain(`id ${e.id} (`)
        expect(hits.text).toMatch(new RegExp(`id ${e.id} \\([^)]*behind pivot #${e.pivot},`))
      }
    }
    return want.length
  }) as Effect.Effect<number, unknown, ContextManager>
