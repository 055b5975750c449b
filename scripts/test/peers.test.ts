/** bench:peers: OpenCode's modelled read against pivot's own window (the bench itself runs in peers.slow.test.ts). */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { DatabaseSync } from "node:sqlite"
import { Session, Window } from "@pivot/core"
import { Sessions } from "@pivot/runtime"
import type { ModelMessage } from "ai"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { SESSION as BENCH_SESSION } from "../bench/support/agentLoop.ts"
import { bulkSession } from "../bench/support/bulkSession.ts"
import { gcWatch, KINDS, make, writeEvents } from "../bench/support/contenders.ts"
import * as OpenCode from "../bench/support/openCode.ts"

const SESSION = "ses_peers"

const shape = (messages: ReadonlyArray<ModelMessage>) =>
  messages.map((m) => `${m.role}(${typeof m.content === "string" ? "text" : m.content.map((p) => p.type).join(",")})`)

/** A session mirrored into both OpenCode stores, cut halfway between two pivots plus `more` events. */
const mirrored = (messages: number, more = 0) => {
  const floor = new OpenCode.InMemory()
  const sqlite = new OpenCode.OnSqlite(new DatabaseSync(":memory:"), SESSION)
  const bulk = bulkSession(SESSION, { observe: OpenCode.mirror(SESSION, [floor, sqlite]) })
  bulk.until(messages, { messages: true, midCycle: true })
  bulk.until(bulk.state.session.version + more)
  return { floor, sqlite, bulk }
}

const json = (value: unknown) => JSON.parse(JSON.stringify(value))

describe("OpenCode's read, modelled", () => {
  it("given a session past several pivots, then its window is pivot's window, from SQLite and from memory alike", async () => {
    const { floor, sqlite, bulk } = mirrored(400)
    const pivot = Window.render(bulk.state.session.window).map((r) => r.message as ModelMessage)
    const fromMemory = await OpenCode.step(floor.newestFirst())
    expect(shape(fromMemory)).toEqual(shape(pivot))
    expect(json(fromMemory)).toEqual(json(pivot))
    expect(await OpenCode.step(sqlite.newestFirst())).toEqual(fromMemory)
  })

  it("given outputs pruned inside the window, then OpenCode's rows and objects show them cleared as pivot does", async () => {
    // 13 turns past mid-cycle: the prune of turn 144 cleared outputs that are still in the window.
    const { floor, sqlite, bulk } = mirrored(400, 39)
    const pivot = Window.render(bulk.state.session.window).map((r) => r.message as ModelMessage)
    const fromSqlite = await OpenCode.step(sqlite.newestFirst())
    expect(JSON.stringify(pivot)).toContain("[Old tool result content cleared]")
    expect(json(fromSqlite)).toEqual(json(pivot))
    expect(json(await OpenCode.step(floor.newestFirst()))).toEqual(json(pivot))
  })

  it("given a session mid-cycle, then OpenCode's prune pass would clear what pivot's Decider clears", () => {
    const { floor, bulk } = mirrored(400, 39)
    const decided = Session.decide({ _tag: "Prune", at: 1, protect: 2_000, minimum: 0 }, bulk.state.session)
    if (Result.isFailure(decided)) throw new Error(decided.failure._tag)
    const cleared = decided.success.filter((e) => e._tag === "PartCompacted").length
    expect(cleared).toBeGreaterThan(0)
    expect(OpenCode.prunePass(floor.messages, 2_000, 0)).toBe(cleared)
    expect(OpenCode.prunePass(floor.messages, 2_000, 1_000_000)).toBe(0)
  })

  it("given a session past several pivots, then the read stops at the tail start instead of reading every message", () => {
    const { floor } = mirrored(400)
    let pulled = 0
    const counting = function* () {
      for (const m of floor.newestFirst()) {
        pulled++
        yield m
      }
    }
    const window = OpenCode.filterCompacted(counting())
    const marker = window[0]!.parts.find((p) => p.type === "compaction") as { tail_start_id?: string }
    const tailAt = floor.messages.findIndex((m) => m.info.id === marker.tail_start_id)
    expect(tailAt).toBeGreaterThan(0)
    expect(pulled).toBe(floor.messages.length - tailAt)
    expect(pulled).toBeLessThan(floor.messages.length / 2)
  })
})

describe("bench:peers' contenders", () => {
  it("given one session's files, then every contender loads it, takes pivot's new events and answers the same window each turn", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "peers-test-"))
    try {
      // The contenders' session id: pivot's runtime takes the snapshot only for the session it was written for.
      const bulk = bulkSession(BENCH_SESSION)
      const events = path.join(dir, "events.ndjson")
      const snapshot = path.join(dir, "snapshot.json")
      writeEvents(events, bulk.until(300, { messages: true, afterPivot: true }))
      fs.writeFileSync(
        snapshot,
        JSON.stringify({
          version: bulk.state.session.version,
          format: Sessions.SNAPSHOT_FORMAT,
          data: Sessions.encodeSnapshot(Sessions.retain(bulk.state)),
        }),
      )
      const watch = gcWatch()
      const contenders = KINDS.map((kind) =>
        make(
          {
            kind,
            events,
            snapshot,
            warmEvents: events,
            warmSnapshot: snapshot,
            db: path.join(dir, `${kind}.db`),
            warmMs: 0,
            budget: 5_000_000,
          },
          watch,
        ),
      )
      const loaded = []
      for (const c of contenders) loaded.push(await c.load())
      // The plain history holds every user and assistant message the session stored, markers and summaries aside.
      expect(loaded[4]!.plain).toBeGreaterThan(250)
      expect(loaded[5]!.plain).toBe(loaded[4]!.plain)
      for (const c of contenders) await c.warm(true)
      for (let i = 0; i < 3; i++) {
        const source = await contenders[0]!.turn(i, [])
        // A user message and 2 + i tool steps, recorded by pivot's memory store and handed to the others.
        expect(source.events!.filter((e) => e.type === "AssistantStepRecorded")).toHaveLength(2 + i)
        expect(source.record).toHaveLength(2 + i)
        const others = []
        for (const c of contenders.slice(1)) others.push(await c.turn(i, source.events!))
        for (const [k, t] of others.entries()) {
          expect(t.micros, KINDS[k + 1]).toBeGreaterThan(0)
          if (t.window !== undefined) expect(t.window, KINDS[k + 1]).toEqual(source.window)
        }
        // pivot on SQLite and both OpenCodes answer a window to compare; the plain-history peers do not.
        expect(others.filter((t) => t.window !== undefined)).toHaveLength(3)
      }
      for (const c of contenders) await c.close()
      // Every contender's calls were charged to its own sections.
      const report = watch.report()
      watch.stop()
      for (const kind of KINDS) expect(report.get(kind)?.sections, kind).toBe(3)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
