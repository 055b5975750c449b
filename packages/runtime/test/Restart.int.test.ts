/**
 * The process killed in the middle of a compaction, on an embedded SQLite store: a fresh runtime on the same file
 * resumes the pending compaction, or fails it cleanly — never half a pivot. And a fresh runtime replaying a finished
 * session calls no plugin and no model.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Ids, Window } from "@pivot/core"
import type { Plugins, Sessions } from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { Effect, Fiber } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { failing, run, SESSION, type Setup, services, stub, tool, used, windowOf } from "./support/harness.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-runtime-restart-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
let files = 0
/** A store file; each call of the answer opens it afresh, as a restarted process would. */
const sqlite = () => {
  const filename = path.join(dir, `session-${++files}.db`)
  return () => EventStore.layerSqlite({ filename })
}
/** Real ids (time and randomness), unique across runtimes, as in production. */
const ids = Ids.Ids.layer

const tagsOf = (events: ReadonlyArray<Sessions.Event>) => events.map((e) => e._tag)
const count = (events: ReadonlyArray<Sessions.Event>, tag: string) => events.filter((e) => e._tag === tag).length

/** Runs the loop up to an overflow mid-task, then `prepare` in a fiber that is killed once `until` is recorded. */
const killedAt = (until: string) =>
  Effect.gen(function* () {
    const { cm, sessions } = yield* services
    yield* cm.recordUserMessage(SESSION, { text: "refactor src/store.ts" })
    yield* cm.recordAssistantStep(SESSION, {
      parts: [tool("read", { filePath: "src/store.ts" }, "export {}")],
      usage: used(90_000),
      finish: "tool-calls",
    })
    const fiber = yield* Effect.forkChild(cm.prepare(SESSION))
    for (let i = 0; i < 400; i++) {
      const events = yield* sessions.events(SESSION)
      if (events.some((e) => e._tag === until)) break
      yield* Effect.sleep("5 millis")
    }
    yield* Fiber.interrupt(fiber)
    return yield* sessions.events(SESSION)
  })

const afterRestart = (setup: Setup) =>
  run(
    Effect.gen(function* () {
      const { cm, sessions } = yield* services
      const prepared = yield* cm.prepare(SESSION)
      return { prepared, events: yield* sessions.events(SESSION), state: yield* sessions.load(SESSION) }
    }),
    setup,
  )

describe("killed mid-compaction", () => {
  it("given the process died while the summariser was running, when a fresh runtime prepares, then the same recorded prompt is summarised once and the pivot forms once", async () => {
    const store = sqlite()
    const before = await run(killedAt("CompactionStarted"), {
      ids,
      store: store(),
      summarizer: stub(() => Effect.never),
    })
    expect(tagsOf(before)).toContain("CompactionStarted")
    expect(tagsOf(before)).not.toContain("SummaryFinished")

    const s = stub("resumed summary")
    const out = await afterRestart({ ids, store: store(), summarizer: s })
    expect(s.requests).toHaveLength(1)
    const started = out.events.find((e) => e._tag === "CompactionStarted")
    const sent = s.requests[0]?.messages.at(-1)
    expect(sent?.role === "user" && sent.content[0]?.type === "text" && sent.content[0].text).toBe(
      started?._tag === "CompactionStarted" ? started.prompt : "(no CompactionStarted)",
    )
    expect(count(out.events, "CompactionStarted")).toBe(1)
    expect(count(out.events, "SummaryFinished")).toBe(1)
    expect(count(out.events, "ContinueRequested")).toBe(1)
    const window = windowOf(out.state)
    expect(window[0]?.role === "user" && window[0].parts[0]?.type).toBe("compaction")
    expect(window[1]?.role === "assistant" && window[1].summary).toBe(true)
    expect(out.prepared.next).toBe("call")
  })

  it("given the process died while the summariser was running and the summariser now fails (fallback off), then the compaction fails cleanly: no pivot, the whole history still visible", async () => {
    const store = sqlite()
    await run(killedAt("CompactionStarted"), { ids, store: store(), summarizer: stub(() => Effect.never) })
    const out = await afterRestart({
      ids,
      store: store(),
      summarizer: failing("failed", "HTTP 500"),
      options: { fallback: false },
    })
    expect(count(out.events, "SummaryFailed")).toBe(1)
    expect(count(out.events, "SummaryFinished")).toBe(0)
    expect(out.state.session.window.pivot).toBeUndefined()
    expect(out.state.session.pending).toBeUndefined()
    expect(
      windowOf(out.state).some(
        (m) => m.role === "user" && m.parts.some((p) => p.type === "text" && p.text === "refactor src/store.ts"),
      ),
    ).toBe(true)
  })

  it("given the process died after the summary but before the continue step, then a fresh runtime adds exactly one continue message", async () => {
    const store = sqlite()
    const hanging: Plugins.Plugin = { name: "slow", timeout: "1 hour", autoContinue: () => Effect.never }
    const before = await run(killedAt("SummaryFinished"), { ids, store: store(), options: { plugins: [hanging] } })
    expect(tagsOf(before)).toContain("SummaryFinished")
    expect(tagsOf(before)).not.toContain("ContinueRequested")

    const s = stub()
    const out = await afterRestart({ ids, store: store(), summarizer: s })
    expect(s.requests).toHaveLength(0)
    expect(count(out.events, "SummaryFinished")).toBe(1)
    expect(count(out.events, "ContinueRequested")).toBe(1)
    expect(out.prepared.compaction?.continuation).toBe("continued")
  })

  it("given the process died before the compaction started, then a fresh runtime runs it from the request", async () => {
    const store = sqlite()
    const stuck: Plugins.Plugin = { name: "stuck", timeout: "1 hour", compactionContext: () => Effect.never }
    const before = await run(killedAt("CompactionRequested"), { ids, store: store(), options: { plugins: [stuck] } })
    expect(tagsOf(before)).not.toContain("CompactionStarted")
    const out = await afterRestart({ ids, store: store() })
    expect(count(out.events, "CompactionStarted")).toBe(1)
    expect(count(out.events, "SummaryFinished")).toBe(1)
  })
})

describe("replay", () => {
  it("given a finished session with a pivot, when a fresh runtime loads, reports usage and prepares, then no plugin and no model is called and the window is the same", async () => {
    const store = sqlite()
    let pluginCalls = 0
    const counting: Plugins.Plugin = {
      name: "counting",
      compactionContext: () => {
        pluginCalls++
        return { context: ["extra"] }
      },
      autoContinue: () => {
        pluginCalls++
        return { enabled: true }
      },
    }
    const first = await run(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        yield* cm.recordUserMessage(SESSION, { text: "go" })
        yield* cm.recordAssistantStep(SESSION, {
          parts: [tool("bash", { command: "ls" }, "a")],
          usage: used(90_000),
          finish: "tool-calls",
        })
        yield* cm.prepare(SESSION)
        return Window.messages((yield* sessions.load(SESSION)).session.window)
      }),
      { ids, store: store(), options: { plugins: [counting] } },
    )
    const callsAfterFirst = pluginCalls
    expect(callsAfterFirst).toBe(2)

    const s = stub()
    const out = await run(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        const usage = yield* cm.usage(SESSION)
        const prepared = yield* cm.prepare(SESSION)
        return { usage, prepared, window: Window.messages((yield* sessions.load(SESSION)).session.window) }
      }),
      { ids, store: store(), summarizer: s, options: { plugins: [counting] } },
    )
    expect(pluginCalls).toBe(callsAfterFirst)
    expect(s.requests).toHaveLength(0)
    expect(out.window).toEqual(first)
    expect(out.prepared.compaction).toBeUndefined()
    expect(out.usage.pivots).toBe(1)
  })
})
