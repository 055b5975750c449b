/**
 * `Events.sensitive`, the fields crypto-shredding encrypts and `forget` erases: an event with every one of them erased
 * still decodes, and every decision the log records — token usage, compactions and their pivots, pruned outputs, the
 * window's shape — folds the same. The erasure here is the test's own walk over the encoded events (the reference),
 * not the store's codec.
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as CompactionHistory from "../src/CompactionHistory.ts"
import * as Events from "../src/Events.ts"
import * as PruneIndex from "../src/PruneIndex.ts"
import * as Session from "../src/Session.ts"
import * as Usage from "../src/Usage.ts"
import * as Window from "../src/Window.ts"
import { generatedArb } from "./support/sessions.ts"

const ERASED = "[ERASED]"

/** Every string at `path` (and below its end) replaced by `ERASED`; `*` walks every array element. */
const eraseAt = (value: unknown, path: ReadonlyArray<string>): unknown => {
  if (path.length === 0) {
    if (typeof value === "string") return ERASED
    if (Array.isArray(value)) return value.map((v) => eraseAt(v, []))
    if (typeof value === "object" && value !== null)
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, eraseAt(v, [])]))
    return value
  }
  const [head, ...rest] = path
  if (Array.isArray(value)) return head === "*" ? value.map((v) => eraseAt(v, rest)) : value
  if (typeof value === "object" && value !== null && head !== undefined && head in value)
    return { ...value, [head]: eraseAt((value as Record<string, unknown>)[head], rest) }
  return value
}

const erase = (event: Events.Event): Events.Event => {
  let encoded: unknown = Events.encode(event)
  for (const path of Events.sensitive[event._tag]) encoded = eraseAt(encoded, path)
  return Events.decode(encoded)
}

/** What a window is made of, without its text: ids, roles, part ids and types, summary flags. */
const shape = (state: Window.State) =>
  Window.messages(state).map((m) => ({
    id: m.id,
    role: m.role,
    summary: m.role === "assistant" ? m.summary : undefined,
    tokens: m.role === "assistant" ? m.tokens : undefined,
    parts: m.parts.map((p) => [p.id, p.type, p.type === "tool" ? p.state.status : undefined]),
  }))

const decisions = (events: ReadonlyArray<Events.Event>) => {
  let usage = Usage.initial
  let history = CompactionHistory.initial
  let pruned = PruneIndex.initial
  let session = Session.initialState
  events.forEach((event, i) => {
    usage = Usage.evolve(usage, event)
    history = CompactionHistory.evolve(history, event, i + 1)
    pruned = PruneIndex.projection.evolve(pruned, event, { id: `evt_${i + 1}`, version: i + 1 })
    session = Session.evolve(session, event)
  })
  return {
    usage,
    compactions: history.entries.map((e) => ({
      markerId: e.markerId,
      status: e.status,
      requestedVersion: e.requestedVersion,
      settledVersion: e.settledVersion,
      summaryId: e.summaryId,
      summaryTokens: e.summaryTokens,
      head: e.plan?.head,
      tail: e.plan?.tail,
    })),
    pruned,
    window: shape(session.window),
    pending: session.pending,
    lastFinished: session.lastFinished,
  }
}

const texts = (events: ReadonlyArray<Events.Event>): ReadonlyArray<string> =>
  events.flatMap((event) => {
    const message =
      event._tag === "UserMessageAdded" || event._tag === "AssistantStepRecorded"
        ? event.message
        : event._tag === "SummaryFinished"
          ? event.summary
          : undefined
    return (message?.parts ?? []).flatMap((p) =>
      "text" in p && p.text.length >= 12 ? [p.text] : p.type === "file" && p.url.length >= 12 ? [p.url] : [],
    )
  })

describe("Events.sensitive (what forget erases)", () => {
  it("property: erasing every sensitive field keeps every event decodable and every recorded decision the same", () => {
    fc.assert(
      fc.property(generatedArb(40), (generated) => {
        const erased = generated.events.map(erase)
        expect(decisions(erased)).toEqual(decisions(generated.events))
        const json = JSON.stringify(erased.map((e) => Events.encode(e)))
        for (const text of texts(generated.events)) expect(json).not.toContain(text)
      }),
      { numRuns: 60 },
    )
  })

  it("given the catalog, then every event type lists its sensitive fields (none forgotten when a type is added)", () => {
    expect(Object.keys(Events.sensitive).sort()).toEqual([...Events.types].sort())
  })

  it("given a tool result, then its input, output, error and title are sensitive and its status is not", () => {
    const event = Events.decode({
      _tag: "ToolResultRecorded",
      at: 1,
      messageId: "msg_a",
      partId: "prt_a",
      state: { status: "completed", input: { command: "cat .env", n: 2 }, output: "KEY=v", title: "cat", startedAt: 1 },
    })
    expect(Events.encode(erase(event))).toEqual({
      _tag: "ToolResultRecorded",
      at: 1,
      messageId: "msg_a",
      partId: "prt_a",
      state: { status: "completed", input: { command: ERASED, n: 2 }, output: ERASED, title: ERASED, startedAt: 1 },
    })
  })
})
