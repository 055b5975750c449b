// Compaction under drive mode: the rule that asks OpenCode to compact when pivot's strategy says so (at its boundaries,
// and its loop guard against a simple model of the same rule), and the plugin's hooks with a fake OpenCode client.
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { CompactionHistory, type Events, Session, Window } from "@pivot/core"
import fc from "fast-check"
import { afterEach, describe, expect, it } from "vitest"
import * as DriveCompaction from "../src/DriveCompaction.ts"
import type { Client, Hooks, MessageWithParts } from "../src/OpenCode.ts"
import * as Plugin from "../src/Plugin.ts"
import { storedEvents } from "./support/Compare.ts"

/** A situation where everything says ask: due, measured, far from OpenCode's limit, no pivot yet. */
const due: DriveCompaction.Situation = {
  reason: "threshold",
  measured: true,
  compacting: false,
  pivots: 0,
  request: 150_000,
  usable: 196_000,
  output: 4_000,
}

describe("DriveCompaction.decide", () => {
  it("asks when the strategy says so, and waits when it does not, before a measured call, or while compacting", () => {
    expect(DriveCompaction.decide(due, undefined).verdict).toEqual({ _tag: "Ask", reason: "threshold" })
    expect(DriveCompaction.decide({ ...due, reason: "rent-or-buy" }, undefined).verdict).toEqual({
      _tag: "Ask",
      reason: "rent-or-buy",
    })
    const why = (s: Partial<DriveCompaction.Situation>) => DriveCompaction.decide({ ...due, ...s }, undefined).verdict
    expect(why({ reason: undefined })).toEqual({ _tag: "Wait", why: "not-due" })
    expect(why({ measured: false })).toEqual({ _tag: "Wait", why: "unmeasured" })
    expect(why({ compacting: true })).toEqual({ _tag: "Wait", why: "compacting" })
  })

  it("leaves it to OpenCode once the coming call may reach OpenCode's own limit (request + output = usable)", () => {
    const at = (request: number) => DriveCompaction.decide({ ...due, request }, undefined).verdict._tag
    // usable 196,000, output 4,000: the boundary is a request of 192,000.
    expect(at(191_999)).toBe("Ask")
    expect(at(192_000)).toBe("Wait")
    expect(at(192_001)).toBe("Wait")
  })

  it("asks once per pivot: not again before the pivot it asked for is recorded", () => {
    const first = DriveCompaction.decide(due, undefined)
    expect(first.asked).toEqual({ pivots: 0, progressed: false })
    expect(DriveCompaction.decide(due, first.asked).verdict).toEqual({ _tag: "Wait", why: "asked" })
  })

  it("does not loop: after its pivot, it asks again only once a measured call was under the trigger", () => {
    const asked = DriveCompaction.decide(due, undefined).asked
    // The pivot is recorded; the first call after it is not measured yet.
    const after = { ...due, pivots: 1 }
    expect(DriveCompaction.decide({ ...after, measured: false }, asked).verdict).toEqual({
      _tag: "Wait",
      why: "unmeasured",
    })
    // The summary left the window over the trigger: no second request.
    expect(DriveCompaction.decide(after, asked).verdict).toEqual({ _tag: "Wait", why: "no-progress" })
    // A measured call under the trigger after the pivot: progress, and the next time it is due pivot asks again.
    const under = DriveCompaction.decide({ ...after, reason: undefined }, asked)
    expect(under.asked).toEqual({ pivots: 0, progressed: true })
    expect(DriveCompaction.decide(after, under.asked).verdict._tag).toBe("Ask")
    // An unmeasured call under the trigger is no progress.
    expect(DriveCompaction.decide({ ...after, reason: undefined, measured: false }, asked).asked).toEqual(asked)
    // A pivot pivot did not ask for (OpenCode's own) starts afresh.
    expect(DriveCompaction.decide({ ...due, pivots: 2 }, asked).verdict._tag).toBe("Ask")
  })

  // The loop guard as an invariant over any run of calls, checked against a plain model of the trace: between two
  // requests, the pivot count grew and, unless a pivot pivot did not ask for came in between, a measured call after the
  // first request's pivot was under the trigger.
  it("property: between any two requests, a pivot came and a measured call under the trigger or another pivot", () => {
    const situation = fc.record({
      reason: fc.constantFrom(undefined, "threshold", "rent-or-buy"),
      measured: fc.boolean(),
      compacting: fc.boolean(),
      grow: fc.nat({ max: 2 }),
      request: fc.constantFrom(0, 191_999, 192_000, 250_000),
    })
    fc.assert(
      fc.property(fc.array(situation, { maxLength: 40 }), (run) => {
        let asked: DriveCompaction.Asked | undefined
        let pivots = 0
        const trace: Array<{ ask: boolean; pivots: number; under: boolean }> = []
        for (const s of run) {
          pivots += s.grow
          const result = DriveCompaction.decide(
            { ...s, reason: s.reason ?? undefined, pivots, usable: 196_000, output: 4_000 },
            asked,
          )
          asked = result.asked
          trace.push({
            ask: result.verdict._tag === "Ask",
            pivots,
            under: s.reason === undefined && s.measured,
          })
          // Never asked while compacting, unmeasured or near OpenCode's own limit.
          if (result.verdict._tag === "Ask") expect(!s.compacting && s.measured && s.request < 192_000).toBe(true)
        }
        const asks = trace.flatMap((t, i) => (t.ask ? [i] : []))
        for (const [a, b] of asks.slice(1).map((b, k) => [asks[k]!, b] as const)) {
          const from = trace[a]!.pivots
          expect(trace[b]!.pivots).toBeGreaterThan(from)
          const between = trace.slice(a + 1, b)
          const progress = between.some((t) => t.under && t.pivots > from)
          const other = between.some((t) => t.pivots > from + 1) || trace[b]!.pivots > from + 1
          expect(progress || other).toBe(true)
        }
      }),
    )
  })
})

const fixture = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../opencode/test/fixtures/pruned.json")

interface Exported {
  info: { id: string }
  messages: Array<MessageWithParts>
}

/** The fixture, a minute old (a warm cache), its last call's count `tokens`; without its last answer when `open`. */
const session = (tokens: number, open = false): Exported => {
  const data = JSON.parse(Fs.readFileSync(fixture, "utf8")) as Exported
  const messages = open ? data.messages.slice(0, -1) : data.messages
  const shift = Date.now() - 60_000 - 1760000012000
  for (const m of messages) {
    const time = m.info.time as Record<string, number>
    for (const k of Object.keys(time)) time[k] = time[k]! + shift
  }
  // The call's context count is `tokens` (no output).
  const last = messages.at(-1)!.info as unknown as { tokens: { input: number; output: number } }
  last.tokens = { ...last.tokens, input: tokens, output: 0 }
  return { info: data.info, messages }
}

const folders: Array<string> = []
const disposers: Array<Hooks> = []
afterEach(async () => {
  for (const hooks of disposers.splice(0)) await hooks.dispose()
  for (const folder of folders.splice(0)) Fs.rmSync(folder, { recursive: true, force: true })
})

const MODEL = { id: "model", providerID: "scripted", limit: { context: 200_000, output: 4_000 } }

const driven = async (data: Exported, options: Plugin.Options, refuse = false) => {
  const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "pivot-drive-compaction-"))
  folders.push(directory)
  const asked: Array<unknown> = []
  const logs: Array<string> = []
  const client: Client = {
    session: {
      get: async () => ({ data: data.info }),
      messages: async () => ({ data: data.messages }),
      summarize: async (request) => {
        asked.push(request)
        return refuse ? { error: { name: "BadRequest", data: { message: "refused" } } } : { data: true }
      },
    },
    app: { log: async (o) => void logs.push(o.body.message) },
  }
  const hooks = await Plugin.make({ client, directory }, { drive: true, hud: false, ...options }, {})
  disposers.push(hooks)
  const call = async () => {
    await hooks["experimental.chat.system.transform"]({ sessionID: data.info.id, model: MODEL }, { system: ["You"] })
    await hooks["experimental.chat.messages.transform"]({}, { messages: structuredClone(data.messages) })
  }
  const autocontinue = async () => {
    const output = { enabled: true }
    await hooks["experimental.compaction.autocontinue"]({ sessionID: data.info.id }, output)
    return output.enabled
  }
  // OpenCode ended a compaction (`session.compacted`): the plugin syncs the session.
  const compacted = () => hooks.event({ event: { type: "session.compacted", properties: { sessionID: data.info.id } } })
  const stored = () => storedEvents(Path.join(directory, Plugin.DEFAULT_DB), data.info.id)
  return { call, autocontinue, compacted, stored, asked, logs, hooks }
}

/**
 * What OpenCode stores for a compaction it runs: its marker (created now) and the finished summary, appended to the
 * session in OpenCode's shape (as in the importer's fixtures). Returns the marker's id.
 */
const compactNow = (data: Exported, n: number): string => {
  const sessionID = data.info.id
  const created = Date.now()
  const markerId = `msg_9${n}a`
  const summaryId = `msg_9${n}b`
  const tokens = { input: 400, output: 60, reasoning: 0, cache: { read: 0, write: 0 } }
  data.messages.push(
    {
      info: { id: markerId, sessionID, role: "user", time: { created }, agent: "build", model: MODEL_REF },
      parts: [{ type: "compaction", auto: true, id: `prt_9${n}a`, sessionID, messageID: markerId }],
    },
    {
      info: {
        id: summaryId,
        sessionID,
        role: "assistant",
        time: { created: created + 1, completed: created + 2 },
        parentID: markerId,
        modelID: MODEL_REF.modelID,
        providerID: MODEL_REF.providerID,
        mode: "compaction",
        agent: "compaction",
        path: { cwd: "/repo", root: "/repo" },
        cost: 0,
        tokens,
        summary: true,
        finish: "stop",
      },
      parts: [
        { type: "step-start", id: `prt_9${n}b`, sessionID, messageID: summaryId },
        { type: "text", text: "## Goal\nThe summary.", id: `prt_9${n}c`, sessionID, messageID: summaryId },
        { type: "step-finish", reason: "stop", cost: 0, tokens, id: `prt_9${n}d`, sessionID, messageID: summaryId },
      ],
    },
  )
  return markerId
}

const MODEL_REF = { providerID: "scripted", modelID: "model" }

/** The window each prefix of `events` folds to. */
const windowsOf = (events: ReadonlyArray<Events.Event>) => {
  let state = Session.initialState
  return events.map((event) => {
    state = Session.evolve(state, event)
    return JSON.stringify(Window.messages(state.window))
  })
}

// The scripted model's limits: usable 196,000; cache-aware's trigger is 75% of the room above the fixed prompt the
// fixture's first call measures (~1.2k, ADR 0034): about 147.3k. Its boundary is tested where the rule lives (core
// Overflow, runtime CompactionDue.test.ts); here, calls clearly above and below it.
describe("drive mode's compaction request", () => {
  it("asks OpenCode once, as an automatic compaction, when the strategy's trigger is reached", async () => {
    const { call, asked, logs } = await driven(session(150_000), { strategy: "cache-aware", driveCompaction: true })
    await call()
    expect(asked).toEqual([
      { path: { id: "ses_pruned" }, body: { providerID: "scripted", modelID: "model", auto: true } },
    ])
    await call()
    expect(asked).toHaveLength(1)
    expect(logs).toEqual([])
  })

  it("asks nothing under the trigger, nor when the option is off or no strategy is named", async () => {
    for (const [tokens, options] of [
      [145_000, { strategy: "cache-aware", driveCompaction: true }],
      [160_000, { strategy: "cache-aware" }],
      [160_000, { driveCompaction: true }],
    ] as const) {
      const { call, asked } = await driven(session(tokens), options)
      await call()
      expect(asked, `${tokens} ${JSON.stringify(options)}`).toEqual([])
    }
  })

  it("lets the agent go on after the compaction it asked for only when the turn was in progress", async () => {
    for (const [open, going] of [
      [true, true],
      [false, false],
    ] as const) {
      const { call, asked, autocontinue } = await driven(session(160_000, open), {
        strategy: "cache-aware",
        driveCompaction: true,
      })
      await call()
      expect(asked).toHaveLength(1)
      expect(await autocontinue(), open ? "the turn in progress" : "the turn had ended").toBe(going)
    }
    // A compaction pivot did not ask for keeps OpenCode's default.
    const { autocontinue } = await driven(session(1_000), { strategy: "cache-aware", driveCompaction: true })
    expect(await autocontinue()).toBe(true)
  })
})

// The request is recorded (ADR 0044): once per request, linked to the marker OpenCode added for it, with why pivot
// asked and what it measured; the window is the same with it as without it.
describe("drive mode's compaction request, recorded", () => {
  const settle = () => new Promise((resolve) => setTimeout(resolve, 20))
  const byStrategy = (events: ReadonlyArray<Events.Event>) =>
    events.filter((e) => e._tag === "CompactionRequestedByStrategy")

  it("records it once, linked to OpenCode's marker, with the reason, the tokens measured, the trigger and OpenCode's limit", async () => {
    const data = session(150_000)
    const asking = Date.now()
    const { call, compacted, stored, asked } = await driven(data, { strategy: "cache-aware", driveCompaction: true })
    await call()
    expect(asked).toHaveLength(1)
    // Nothing is recorded before OpenCode's marker is.
    await compacted()
    expect(byStrategy(await stored())).toEqual([])
    const marker = compactNow(data, 1)
    await compacted()
    await call()
    await compacted()
    const events = await stored()
    const recorded = byStrategy(events)
    expect(recorded).toHaveLength(1)
    const event = recorded[0]!
    if (event._tag !== "CompactionRequestedByStrategy") throw new Error("unreachable")
    expect(event).toMatchObject({ markerId: marker, reason: "threshold", tokens: 150_000, usable: 196_000 })
    expect(event.strategy).toMatch(/^cache-aware/)
    expect(event.trigger).toBeGreaterThan(140_000)
    expect(event.trigger).toBeLessThanOrEqual(150_000)
    expect(event.request).toBeGreaterThanOrEqual(150_000)
    expect(event.at).toBeGreaterThanOrEqual(asking)
    const markerAt = events.findIndex((e) => e._tag === "CompactionRequested" && e.marker.id === marker)
    expect(markerAt).toBeGreaterThanOrEqual(0)
    expect(events.indexOf(event)).toBeGreaterThan(markerAt)
    // The compaction history links the pivot to it; the window is the same with it as without it.
    const history = events.reduce((h, e, i) => CompactionHistory.evolve(h, e, i + 1), CompactionHistory.initial)
    expect(CompactionHistory.pivots(history).map((p) => [p.markerId, p.reason, p.requestedByStrategy?.tokens])).toEqual(
      [[marker, "threshold", 150_000]],
    )
    expect(windowsOf(events).filter((_, i) => events[i] !== event)).toEqual(
      windowsOf(events.filter((e) => e !== event)),
    )
  })

  it("records nothing for a request OpenCode refused, nor links it to a compaction OpenCode runs on its own", async () => {
    const data = session(150_000)
    const { call, compacted, stored, asked, logs } = await driven(
      data,
      { strategy: "cache-aware", driveCompaction: true },
      true,
    )
    await call()
    expect(asked).toHaveLength(1)
    await settle()
    expect(logs.some((line) => line.startsWith("driveCompaction"))).toBe(true)
    compactNow(data, 1)
    await compacted()
    const events = await stored()
    expect(events.some((e) => e._tag === "CompactionRequested")).toBe(true)
    expect(byStrategy(events)).toEqual([])
  })

  it("links nothing when pivot did not ask: OpenCode's own compaction has no such record", async () => {
    const data = session(1_000)
    const { call, compacted, stored, asked } = await driven(data, { strategy: "cache-aware", driveCompaction: true })
    await call()
    expect(asked).toEqual([])
    compactNow(data, 1)
    await compacted()
    expect(byStrategy(await stored())).toEqual([])
  })
})
