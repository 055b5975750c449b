// pivot's own strategy under drive mode: named in opencode.json (a built-in strategy, zero-cost rules), its prune run
// before each agent call, recorded with its rule and reason, and sent as pivot's window; the recorder tells pivot's
// prunes from OpenCode's.
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { type Events, Render, Strategy } from "@pivot/core"
import { afterEach, describe, expect, it } from "vitest"
import * as DriveStrategy from "../src/DriveStrategy.ts"
import type { Client, Hooks, MessageWithParts } from "../src/OpenCode.ts"
import * as Plugin from "../src/Plugin.ts"
import * as Recorder from "../src/Recorder.ts"
import { storedEvents } from "./support/Compare.ts"
import { pivots, sent } from "./support/Driven.ts"

const fixture = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../opencode/test/fixtures/pruned.json")

interface Exported {
  info: { id: string }
  messages: Array<MessageWithParts>
}

/**
 * The fixture with a third turn that runs the second turn's bash call again (same arguments): the older output is a
 * duplicate. Its messages end `ago` ms before now (the cache is cold past 5 minutes).
 */
const session = (ago: number): Exported => {
  const data = JSON.parse(Fs.readFileSync(fixture, "utf8")) as Exported
  const again = structuredClone(data.messages.slice(3)).map((m): MessageWithParts => {
    const id = m.info.id.replace(/0(\d)$/, (_, d) => `0${Number(d) + 3}`)
    return {
      info: { ...m.info, id, ...(m.info.parentID === undefined ? {} : { parentID: "msg_07" }) },
      parts: m.parts.map((p) => ({ ...p, id: `${String(p.id)}_again`, messageID: id })),
    }
  })
  const messages: Array<MessageWithParts> = [...data.messages, ...again]
  // The third turn 10 s after the second; then every time moved so the last message ends `ago` ms before now.
  const last = 1760000012000 + 10_000
  const shift = Date.now() - ago - last
  for (const m of messages) {
    const time = m.info.time as Record<string, number>
    const later = again.includes(m) ? 10_000 : 0
    for (const k of Object.keys(time)) time[k] = time[k]! + later + shift
  }
  return { info: data.info, messages }
}

const bashOf = (messages: ReadonlyArray<MessageWithParts>, id: string) =>
  messages.find((m) => m.info.id === id)!.parts.find((p) => p.type === "tool") as unknown as {
    id: string
    state: { output: string }
  }

const folders: Array<string> = []
const disposers: Array<Hooks> = []
afterEach(async () => {
  for (const hooks of disposers.splice(0)) await hooks.dispose()
  for (const folder of folders.splice(0)) Fs.rmSync(folder, { recursive: true, force: true })
})

const driven = async (data: Exported, options: Plugin.Options) => {
  const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "pivot-drive-strategy-"))
  folders.push(directory)
  const logs: Array<string> = []
  const client: Client = {
    session: {
      get: async () => ({ data: data.info }),
      messages: async () => ({ data: data.messages }),
      summarize: async () => ({ data: true }),
    },
    app: { log: async (o) => void logs.push(o.body.message) },
  }
  const hooks = await Plugin.make({ client, directory }, { drive: true, hud: false, ...options }, {})
  disposers.push(hooks)
  const transform = async () => {
    const output = { messages: structuredClone(data.messages) }
    await hooks["experimental.chat.messages.transform"]({}, output)
    return output.messages
  }
  const events = () => storedEvents(Path.join(directory, ".pivot/opencode.db"), data.info.id)
  return { transform, events, logs }
}

const ruled = (events: ReadonlyArray<Events.Event>) =>
  events.filter((e) => e._tag === "PartCompacted" && e.rule !== undefined) as Array<
    Extract<Events.Event, { _tag: "PartCompacted" }>
  >

describe("DriveStrategy.resolve", () => {
  it("names none by default, a built-in strategy by name with its rules, and says which name it does not know", () => {
    expect(DriveStrategy.resolve({})).toEqual({ _tag: "None" })
    const chosen = DriveStrategy.resolve({ strategy: "cache-aware", rules: ["duplicate-calls"] })
    expect(chosen._tag === "Strategy" && chosen.strategy.name).toBe("cache-aware+duplicate-calls")
    const rulesOnly = DriveStrategy.resolve({ rules: ["duplicate-calls"] })
    expect(rulesOnly._tag === "Strategy" && rulesOnly.strategy.name).toBe("opencode-1.18+duplicate-calls")
    const own: Strategy.Strategy = { name: "mine" }
    const value = DriveStrategy.resolve({ strategy: own })
    expect(value._tag === "Strategy" && value.strategy.name).toBe("mine")
    const unknown = DriveStrategy.resolve({ strategy: "cheapest" })
    expect(unknown._tag === "Invalid" && unknown.reason).toContain('"cheapest"')
    const badRule = DriveStrategy.resolve({ strategy: "cache-aware", rules: ["everything"] })
    expect(badRule._tag === "Invalid" && badRule.reason).toContain("duplicate-calls")
  })

  it("runs, at a call on a cold cache or a pivot, the prune before a call when there is one, else the prune after a step; on a warm cache none", () => {
    const walk = { _tag: "Prune", parts: [] } as const
    const before: Strategy.Decision = { ...walk, walk: { rule: "before" } } as Strategy.Decision
    const after: Strategy.Decision = { ...walk, walk: { rule: "after" } } as Strategy.Decision
    const at = (cold: boolean, atPivot: boolean) => ({ cache: { cold, atPivot } }) as Strategy.Input
    const input = at(true, false)
    const both = DriveStrategy.atCall({ name: "s", beforeCall: () => before, afterStep: () => after })
    expect(both.afterStep!(input)).toBe(before)
    expect(both.afterStep!(at(false, true))).toBe(before)
    expect(both.afterStep!(at(false, false))).toEqual(Strategy.nothing)
    const compacts = DriveStrategy.atCall({
      name: "s",
      beforeCall: () => ({ _tag: "Compact", reason: "rent-or-buy" }),
      afterStep: () => after,
    })
    expect(compacts.afterStep!(input)).toBe(after)
    expect(DriveStrategy.atCall({ name: "s" }).afterStep!(input)).toEqual(Strategy.nothing)
  })

  it("on a warm cache where the strategy would compact, clears the older turns' outputs instead; unless pivot asks OpenCode to compact", () => {
    const warm = {
      cache: { cold: false, atPivot: false },
      prune: { protectedTools: ["skill"] },
    } as unknown as Strategy.Input
    const wants = (reason: "threshold" | "rent-or-buy") =>
      DriveStrategy.atCall({ name: "s", beforeCall: () => ({ _tag: "Compact", reason }) })
    for (const reason of ["threshold", "rent-or-buy"] as const) {
      const decision = wants(reason).afterStep!(warm)
      expect(decision).toMatchObject({
        _tag: "Prune",
        parts: [],
        walk: {
          protect: 0,
          minimum: 0,
          turns: 1,
          protectedTools: ["skill"],
          rule: DriveStrategy.INSTEAD_OF_COMPACTION,
        },
      })
      expect(decision._tag === "Prune" && decision.walk?.reason).toContain(reason)
    }
    // pivot asks OpenCode for the compaction itself (`driveCompaction`): nothing here.
    expect(DriveStrategy.atCall(wants("threshold"), { compacts: true }).afterStep!(warm)).toEqual(Strategy.nothing)
    // The strategy does not want a compaction (nothing, or a prune that waits for a cold cache): nothing.
    expect(DriveStrategy.atCall({ name: "s", beforeCall: () => Strategy.nothing }).afterStep!(warm)).toEqual(
      Strategy.nothing,
    )
  })
})

describe("pivot's strategy under drive mode", () => {
  it("on a cold cache, clears the older turns' outputs before the call, recorded with the rule, sent as pivot's window", async () => {
    const data = session(5 * 60_000 + 1_000)
    const { transform, events, logs } = await driven(data, { strategy: "cache-aware", rules: ["duplicate-calls"] })
    const messages = await transform()
    const older = bashOf(data.messages, "msg_05")
    expect(bashOf(messages, "msg_05").state.output).toBe(Render.clearedText(older.id))
    // The current turn's output stays.
    expect(bashOf(messages, "msg_08").state.output).toBe(bashOf(data.messages, "msg_08").state.output)
    const stored = await events()
    expect(ruled(stored).map((e) => e.partId)).toEqual([older.id])
    expect(ruled(stored)[0]!.reason).toContain("cold")
    expect(sent(data.info, messages)).toEqual(pivots(stored))
    // OpenCode's own storage untouched; the next call syncs as before (pivot's prune is not taken for an import).
    expect(bashOf(data.messages, "msg_05").state.output).not.toBe(Render.clearedText(older.id))
    await transform()
    expect(ruled(await events())).toHaveLength(1)
    expect(logs).toEqual([])
  })

  it("on a warm cache, clears nothing: the rules wait for a moment the prefix is written anyway", async () => {
    const data = session(60_000)
    const { transform, events } = await driven(data, { strategy: "cache-aware", rules: ["duplicate-calls"] })
    const messages = await transform()
    expect(bashOf(messages, "msg_05").state.output).toBe(bashOf(data.messages, "msg_05").state.output)
    expect(ruled(await events())).toEqual([])
  })

  it("without a strategy, prunes nothing of its own (OpenCode decides)", async () => {
    const data = session(5 * 60_000 + 1_000)
    const { transform, events } = await driven(data, {})
    const messages = await transform()
    expect(bashOf(messages, "msg_05").state.output).toBe(bashOf(data.messages, "msg_05").state.output)
    expect(ruled(await events())).toEqual([])
  })

  it("logs an unknown strategy name once, and drives as without one", async () => {
    const data = session(5 * 60_000 + 1_000)
    const { transform, events, logs } = await driven(data, { strategy: "cheapest" })
    await transform()
    expect(ruled(await events())).toEqual([])
    expect(logs).toHaveLength(1)
    expect(logs[0]).toContain('"cheapest"')
  })
})

describe("Recorder.isImported", () => {
  it("takes OpenCode's prune for an import and pivot's own (a rule named) for pivot's", () => {
    const base = { _tag: "PartCompacted", at: 1, messageId: "msg_1", partId: "prt_1", tokens: 3 } as Events.Event
    expect(Recorder.isImported(base)).toBe(true)
    expect(Recorder.isImported({ ...base, rule: "cold-cache", reason: "cold" } as Events.Event)).toBe(false)
    expect(Recorder.isImported({ _tag: "HudShown", at: 1, text: "x" } as Events.Event)).toBe(false)
  })
})
