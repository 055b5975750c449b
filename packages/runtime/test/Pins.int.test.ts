/**
 * Pins end to end through `ContextManager` (issue 31), on the memory store and a real SQLite file: a scripted session
 * of 6 pivots whose first message states the task and constraints keeps that message verbatim in every later model
 * input with the default pin (and loses it with the default off); the summariser is told what is pinned; a fold of
 * the log gives the same windows; the user's pin / unpin API with its typed refusals, and the budget's evictions.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Window } from "@pivot/core"
import type { ContextManager, Sessions } from "@pivot/runtime"
import { type EventStore, ReadModels } from "@pivot/store"
import { Effect, type Layer } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { layer, SESSION, type Stub, services, stub, used } from "./support/harness.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-pins-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const TASK =
  "Task: migrate the event store to PostgreSQL.\nConstraints: no downtime; keep SQLite working; never rewrite stored events."

type Services = ContextManager | Sessions.Sessions | EventStore
let files = 0
const stores: ReadonlyArray<readonly [string, () => Layer.Layer<EventStore, unknown> | undefined]> = [
  ["memory", () => undefined],
  ["a real SQLite file", () => ReadModels.layerSqlite({ filename: path.join(dir, `pins-${files++}.db`) })],
]

/** The runtime with the first message pinned (`pin_first_message`; off in OpenCode's defaults) unless `options` say. */
const runWith = <A, E>(
  program: Effect.Effect<A, E, Services>,
  store: Layer.Layer<EventStore, unknown> | undefined,
  summarizer: Stub,
  options: Record<string, unknown> = { config: { pin_first_message: true } },
): Promise<A> =>
  Effect.runPromise(
    program.pipe(
      Effect.provide(layer({ options, summarizer, ...(store === undefined ? {} : { store }) })),
    ) as Effect.Effect<A, never>,
  )

/** The user texts of a model input, as sent. */
const userTexts = (messages: ReadonlyArray<{ readonly role: string; readonly content: unknown }>): Array<string> =>
  messages.flatMap((m) =>
    m.role === "user" && Array.isArray(m.content)
      ? m.content.flatMap((c: { type: string; text?: string }) => (c.type === "text" ? [c.text ?? ""] : []))
      : [],
  )

/** Six pivots, each after three turns; answers every model input after a pivot and the replayed windows. */
const sixPivots = Effect.gen(function* () {
  const { cm, sessions } = yield* services
  const first = yield* cm.recordUserMessage(SESSION, { text: TASK })
  const inputs: Array<ReadonlyArray<{ readonly role: string; readonly content: unknown }>> = []
  const live: Array<ReadonlyArray<string>> = []
  for (let p = 1; p <= 6; p++) {
    for (let t = 1; t <= 3; t++) {
      yield* cm.recordUserMessage(SESSION, { text: `pivot ${p}, turn ${t}: ${"details ".repeat(50)}` })
      yield* cm.recordAssistantStep(SESSION, {
        parts: [{ type: "text", text: `answer ${p}.${t} ${"result ".repeat(50)}` }],
        usage: used(1_000 * p + t),
        finish: "stop",
      })
    }
    const compacted = yield* cm.compact(SESSION)
    expect(compacted.outcome?.status).toBe("finished")
    const prepared = yield* cm.prepare(SESSION)
    inputs.push(prepared.modelMessages)
    live.push(prepared.messages.map((r) => r.sourceMessageId))
  }
  const replayed = Window.messages((yield* sessions.history(SESSION)).session.window).map((m) => m.id)
  const pins = yield* cm.pins(SESSION)
  return { firstId: first.messageId, inputs, live, replayed, pins }
})

describe.each(stores)("pins on %s", (_name, store) => {
  it("with the default pin, every model input after each of 6 pivots holds the first message verbatim; a fold of the log gives the same window", async () => {
    const summarizer = stub("## Objective\n- migrate")
    const out = await runWith(sixPivots, store(), summarizer)
    expect(out.inputs).toHaveLength(6)
    for (const input of out.inputs) expect(userTexts(input)).toContain(TASK)
    expect(out.replayed).toEqual(out.live.at(-1)!.filter((id, i, all) => all.indexOf(id) === i))
    expect(out.pins.pins).toEqual([
      expect.objectContaining({ messageId: out.firstId, by: "default", role: "user", preview: expect.any(String) }),
    ])
    expect(out.pins.tokens).toBeGreaterThan(0)
    expect(out.pins.tokens).toBeLessThanOrEqual(out.pins.budget)
    // The summariser was told, at every pivot, which message stays verbatim.
    expect(summarizer.requests).toHaveLength(6)
    for (const request of summarizer.requests)
      expect(JSON.stringify(request.messages)).toContain(`Pinned messages: these stay verbatim`)
  })

  it("a message an earlier pivot summarised can be pinned: it comes back at the next pivot, the same as a fold of the log", async () => {
    const out = await runWith(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        const early = yield* cm.recordUserMessage(SESSION, { text: "Decision: events are never rewritten." })
        for (let p = 1; p <= 2; p++) {
          for (let t = 1; t <= 3; t++) {
            yield* cm.recordUserMessage(SESSION, { text: `pivot ${p}, turn ${t}: ${"details ".repeat(50)}` })
            yield* cm.recordAssistantStep(SESSION, {
              parts: [{ type: "text", text: "ok" }],
              usage: used(10),
              finish: "stop",
            })
          }
          yield* cm.compact(SESSION)
        }
        const before = (yield* cm.prepare(SESSION)).messages.map((r) => r.sourceMessageId)
        yield* cm.pin(SESSION, { messageId: early.messageId! }, "model")
        yield* cm.recordUserMessage(SESSION, { text: "one more turn" })
        yield* cm.compact(SESSION)
        const after = (yield* cm.prepare(SESSION)).messages.map((r) => r.sourceMessageId)
        const replayed = Window.messages((yield* sessions.history(SESSION)).session.window).map((m) => m.id)
        return { early: early.messageId, before, after, replayed }
      }),
      store(),
      stub("## Objective\n- keep events"),
      { config: { pin_first_message: false } },
    )
    expect(out.before).not.toContain(out.early)
    expect(out.after).toContain(out.early)
    expect([...new Set(out.after)]).toEqual(out.replayed)
  })

  it("with pin_first_message off, no input after the first pivot holds it (the test above can fail)", async () => {
    const out = await runWith(sixPivots, store(), stub("## Objective\n- migrate"), {
      config: { pin_first_message: false },
    })
    for (const input of out.inputs) expect(userTexts(input)).not.toContain(TASK)
    expect(out.pins.pins).toEqual([])
  })
})

describe("the pin API", () => {
  it("pins and unpins for the user, refuses bad ids, markers and messages over the budget with one-line typed errors", async () => {
    const result = await runWith(
      Effect.gen(function* () {
        const { cm } = yield* services
        const a = yield* cm.recordUserMessage(SESSION, { text: "first" })
        const b = yield* cm.recordUserMessage(SESSION, { text: "second, a decision: use pg_notify" })
        const pinned = yield* cm.pin(SESSION, { messageId: b.messageId! })
        const again = yield* cm.pin(SESSION, { messageId: b.messageId! })
        const bad = yield* Effect.flip(cm.pin(SESSION, { messageId: "nope" }))
        const unknown = yield* Effect.flip(cm.pin(SESSION, { messageId: "msg_0000000000zzzz" }))
        const big = yield* cm.recordUserMessage(SESSION, { text: "x".repeat(400_000) })
        const over = yield* Effect.flip(cm.pin(SESSION, { messageId: big.messageId! }))
        const listed = yield* cm.pins(SESSION)
        const unpinned = yield* cm.unpin(SESSION, { messageId: a.messageId! })
        const unpinnedAgain = yield* cm.unpin(SESSION, { messageId: a.messageId! })
        const after = yield* cm.pins(SESSION)
        return { pinned, again, bad, unknown, over, listed, unpinned, unpinnedAgain, after, b: b.messageId }
      }),
      undefined,
      stub(),
    )
    expect(result.pinned).toMatchObject({ pinned: true, unpinned: [] })
    expect(result.again.pinned).toBe(false)
    expect(result.bad._tag).toBe("InvalidPinTarget")
    expect(result.bad.message).toBe('"nope" is not a message id')
    expect(result.unknown._tag).toBe("UnknownMessage")
    expect(result.over._tag).toBe("PinOverBudget")
    expect(result.over.message).not.toContain("\n")
    expect(result.listed.pins.map((p) => p.by)).toEqual(["default", "user"])
    expect(result.unpinned.removed).toBe(1)
    expect(result.unpinnedAgain.removed).toBe(0)
    expect(result.after.pins.map((p) => p.messageId)).toEqual([result.b])
  })

  it("a pin over the budget unpins the oldest pin first", async () => {
    const result = await runWith(
      Effect.gen(function* () {
        const { cm } = yield* services
        const a = yield* cm.recordUserMessage(SESSION, { text: "a".repeat(2_000) })
        const b = yield* cm.recordUserMessage(SESSION, { text: "b".repeat(2_000) })
        const listed = yield* cm.pins(SESSION)
        const pinned = yield* cm.pin(SESSION, { messageId: b.messageId! }, "model")
        const after = yield* cm.pins(SESSION)
        return { a: a.messageId, b: b.messageId, listed, pinned, after }
      }),
      undefined,
      stub(),
      // A budget of 1 % of the usable 68_000: 680 tokens, room for one 2_000-character message (~500) only.
      { config: { pin_share: 0.01, pin_first_message: true } },
    )
    expect(result.listed.budget).toBe(680)
    expect(result.listed.pins.map((p) => p.messageId)).toEqual([result.a])
    expect(result.pinned.unpinned).toEqual([{ messageId: result.a }])
    expect(result.after.pins).toEqual([expect.objectContaining({ messageId: result.b, by: "model" })])
  })
})
