// The recorder against an independent reference: a session replayed as OpenCode would have shown it over time (only
// what existed at each instant: messages created by then, completions and prunes that had happened), synced at every
// instant, must leave exactly the events of importing the finished export — whatever the instants, restarts between
// them, or syncs repeated.
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { Events, Ids } from "@pivot/core"
import { Import } from "@pivot/opencode"
import { EventStore, SessionLog } from "@pivot/store"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import type { MessageWithParts } from "../src/OpenCode.ts"
import * as Recorder from "../src/Recorder.ts"

const fixtures = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../opencode/test/fixtures")

interface Exported {
  readonly info: { readonly id: string; readonly [key: string]: unknown }
  readonly messages: ReadonlyArray<MessageWithParts>
}

const load = (name: string): Exported => {
  const text = Fs.readFileSync(Path.join(fixtures, name), "utf8")
  return JSON.parse(text.slice(text.indexOf("{"))) as Exported
}

type Json = { readonly [key: string]: any }

/** The session as OpenCode held it at `now`: what was created by then, completions and prunes that had happened. */
const at = (exported: Exported, now: number): Exported => ({
  info: exported.info,
  messages: exported.messages
    .filter((m) => (m.info as Json).time.created <= now)
    .map((m) => {
      const info = m.info as Json
      const completed = info.time.completed
      const open = completed !== undefined && completed > now
      return {
        info: open
          ? (({ finish: _f, error: _e, ...rest }) => ({ ...rest, time: { created: info.time.created } }))(info)
          : info,
        parts: m.parts.map((p) => {
          const part = p as Json
          const compacted = part.state?.time?.compacted
          if (compacted === undefined || compacted <= now) return p
          const { compacted: _, ...time } = part.state.time
          return { ...part, state: { ...part.state, time } } as unknown as MessageWithParts["parts"][number]
        }),
      } as unknown as MessageWithParts
    }),
})

/** Every instant something happened in the session, in order. */
const instants = (exported: Exported): Array<number> => {
  const times = new Set<number>()
  for (const m of exported.messages) {
    const info = m.info as Json
    times.add(info.time.created)
    if (info.time.completed !== undefined) times.add(info.time.completed)
    for (const p of m.parts) {
      const compacted = (p as Json).state?.time?.compacted
      if (compacted !== undefined) times.add(compacted)
    }
  }
  return [...times].sort((a, b) => a - b)
}

const encoded = (events: ReadonlyArray<Events.Event>) =>
  events.filter((e) => Recorder.IMPORTED.has(e._tag)).map((e) => JSON.stringify(Events.encode(e)))

const stored = (sessionId: string) => Effect.map(SessionLog.read(sessionId), (l) => encoded(l.map((x) => x.event)))

const reference = (exported: Exported) => {
  const imported = Import.importSession(exported)
  if (Result.isFailure(imported)) throw imported.failure
  return encoded(imported.success.events)
}

const run = <A, E>(effect: Effect.Effect<A, E, EventStore>) =>
  Effect.runPromise(Effect.provide(effect, EventStore.layerMemory()))

const FIXTURES = [
  "compaction-tail.json",
  "pruned.json",
  "overflow-replay.json",
  "summary-failed.json",
  "model-change.json",
  "shell-command.json",
]

describe("Recorder.sync", () => {
  it.each(FIXTURES)("%s synced at every instant equals the import of the finished export", async (name) => {
    const exported = load(name)
    const sessionId = exported.info.id
    const result = await run(
      Effect.gen(function* () {
        const recorder = Recorder.make()
        for (const now of instants(exported)) {
          yield* recorder.sync(sessionId, at(exported, now), "step")
          yield* recorder.sync(sessionId, at(exported, now), "call")
        }
        yield* recorder.sync(sessionId, exported, "idle")
        const once = yield* stored(sessionId)
        // Again, and from a restarted plugin: nothing more is written.
        const again = yield* recorder.sync(sessionId, exported, "idle")
        const restarted = yield* Recorder.make().sync(sessionId, exported, "idle")
        return { once, again, restarted, after: yield* stored(sessionId) }
      }),
    )
    expect(result.once).toEqual(reference(exported))
    expect(result.again.appended).toBe(0)
    expect(result.restarted.appended).toBe(0)
    expect(result.after).toEqual(result.once)
  })

  it("resumes after a kill: a new recorder appends exactly what the store lacks", async () => {
    const exported = load("compaction-tail.json")
    const sessionId = exported.info.id
    const times = instants(exported)
    const half = times[Math.floor(times.length / 2)]!
    const result = await run(
      Effect.gen(function* () {
        yield* Recorder.make().sync(sessionId, at(exported, half), "step")
        const before = (yield* stored(sessionId)).length
        const resumed = yield* Recorder.make().sync(sessionId, exported, "idle")
        return { before, resumed, after: yield* stored(sessionId) }
      }),
    )
    expect(result.before).toBeGreaterThan(0)
    expect(result.resumed.appended).toBe(result.after.length - result.before)
    expect(result.after).toEqual(reference(exported))
  })

  it("keeps pivot's own events (HUD, recalls) between the imported ones", async () => {
    const exported = load("pruned.json")
    const sessionId = exported.info.id
    const times = instants(exported)
    const result = await run(
      Effect.gen(function* () {
        const recorder = Recorder.make()
        yield* recorder.sync(sessionId, at(exported, times[2]!), "call")
        const version = yield* SessionLog.version(sessionId)
        yield* SessionLog.append(sessionId, version, [
          { id: SessionLog.eventId(sessionId, version + 1), event: { _tag: "HudShown", at: 1, text: "hud" } },
        ])
        yield* recorder.sync(sessionId, exported, "idle")
        return yield* SessionLog.read(sessionId)
      }),
    )
    expect(encoded(result.map((l) => l.event))).toEqual(reference(exported))
    expect(result.filter((l) => l.event._tag === "HudShown")).toHaveLength(1)
  })

  it("keeps pivot's own prunes (a rule's PartCompacted, an input cleared) between the imported ones", async () => {
    const exported = load("pruned.json")
    const sessionId = exported.info.id
    const times = instants(exported)
    const result = await run(
      Effect.gen(function* () {
        const recorder = Recorder.make()
        yield* recorder.sync(sessionId, at(exported, times[2]!), "call")
        const version = yield* SessionLog.version(sessionId)
        const event: Events.Event = {
          _tag: "PartCompacted",
          at: 1,
          messageId: Ids.unsafe.message("msg_02"),
          partId: Ids.unsafe.part("prt_02_04"),
          tokens: 3,
          rule: "errored-inputs",
          reason: "test",
          target: "input",
        }
        yield* SessionLog.append(sessionId, version, [{ id: SessionLog.eventId(sessionId, version + 1), event }])
        // A new recorder too (a restarted OpenCode reads the stream from the start).
        yield* recorder.sync(sessionId, exported, "idle")
        yield* Recorder.make().sync(sessionId, exported, "idle")
        return yield* SessionLog.read(sessionId)
      }),
    )
    expect(encoded(result.map((l) => l.event).filter(Recorder.isImported))).toEqual(reference(exported))
    expect(result.filter((l) => l.event._tag === "PartCompacted" && l.event.rule === "errored-inputs")).toHaveLength(1)
  })

  it("refuses to append after a stored event that OpenCode's session no longer has", async () => {
    const exported = load("compaction-tail.json")
    const sessionId = exported.info.id
    const edited: Exported = {
      info: exported.info,
      messages: exported.messages.map((m, i) =>
        i === 0
          ? ({
              info: m.info,
              parts: m.parts.map((p) => (p.type === "text" ? { ...p, text: "rewritten" } : p)),
            } as MessageWithParts)
          : m,
      ),
    }
    const outcome = await run(
      Effect.gen(function* () {
        yield* Recorder.make().sync(sessionId, at(exported, instants(exported)[1]!), "call")
        const before = yield* SessionLog.version(sessionId)
        const failed = yield* Effect.flip(Recorder.make().sync(sessionId, edited, "idle"))
        return { before, failed, after: yield* SessionLog.version(sessionId) }
      }),
    )
    expect(outcome.failed._tag).toBe("Diverged")
    expect(outcome.after).toBe(outcome.before)
  })
})

describe("Recorder.settled", () => {
  const user = (id: string, parts: Array<{ type: string }> = [{ type: "text" }]): MessageWithParts => ({
    info: { id, role: "user", time: { created: 1 } },
    parts,
  })
  const assistant = (id: string, done: boolean, extra: Json = {}): MessageWithParts => ({
    info: { id, role: "assistant", time: done ? { created: 1, completed: 2 } : { created: 1 }, ...extra },
    parts: [],
  })
  const ids = (ms: ReadonlyArray<MessageWithParts>) => ms.map((m) => m.info.id)

  it("stops at an assistant message still being written, in id order", () => {
    const ms = [user("msg_1"), assistant("msg_2", false)]
    expect(ids(Recorder.settled(ms, "call"))).toEqual(["msg_1"])
    // Once the session stopped, OpenCode will not finish it (a killed process): it is taken as it is.
    expect(ids(Recorder.settled(ms, "idle"))).toEqual(["msg_1", "msg_2"])
  })

  it("takes an unfinished assistant message OpenCode moved on from (an overflow it compacted after)", () => {
    const ms = [assistant("msg_3", true), user("msg_1"), assistant("msg_2", false)]
    expect(ids(Recorder.settled(ms, "call"))).toEqual(["msg_1", "msg_2", "msg_3"])
  })

  it("takes a trailing user message only once a model call is built from it", () => {
    const ms = [user("msg_1"), assistant("msg_2", true), user("msg_3")]
    expect(ids(Recorder.settled(ms, "step"))).toEqual(["msg_1", "msg_2"])
    expect(ids(Recorder.settled(ms, "call"))).toEqual(["msg_1", "msg_2", "msg_3"])
  })

  it("holds back a compaction marker until its summary ended, unless the session stopped", () => {
    const marker = user("msg_3", [{ type: "compaction" }])
    const ms = [user("msg_1"), assistant("msg_2", true), marker]
    expect(ids(Recorder.settled(ms, "call"))).toEqual(["msg_1", "msg_2"])
    expect(ids(Recorder.settled(ms, "idle"))).toEqual(["msg_1", "msg_2", "msg_3"])
    const summarised = [...ms, assistant("msg_4", true, { summary: true, parentID: "msg_3" })]
    expect(ids(Recorder.settled(summarised, "call"))).toEqual(["msg_1", "msg_2", "msg_3", "msg_4"])
  })

  it("counts a failed assistant message as finished", () => {
    const ms = [user("msg_1"), assistant("msg_2", false, { error: { name: "APIError" } })]
    expect(ids(Recorder.settled(ms, "step"))).toEqual(["msg_1", "msg_2"])
  })
})
