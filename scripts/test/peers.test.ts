/** bench:peers: OpenCode's modelled read against pivot's own window, and the bench itself on a tiny history. */
import { spawnSync } from "node:child_process"
import * as path from "node:path"
import { DatabaseSync } from "node:sqlite"
import { fileURLToPath } from "node:url"
import { Session, Window } from "@pivot/core"
import type { ModelMessage } from "ai"
import { Result } from "effect"
import { describe, expect, it } from "vitest"
import { bulkSession } from "../bench/support/bulkSession.ts"
import * as OpenCode from "../bench/support/openCode.ts"

const SESSION = "ses_peers"
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")

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

describe("npm run bench:peers", () => {
  it("given a tiny history, then it runs every contender and prints the tables", () => {
    const run = spawnSync(
      process.execPath,
      [
        "--conditions=@pivot/source",
        "--expose-gc",
        "scripts/bench/peers.ts",
        "--sizes",
        "150",
        "--turns",
        "3",
        "--restarts",
        "1",
        "--warm-ms",
        "0",
      ],
      { cwd: root, encoding: "utf8" },
    )
    expect(run.stderr).not.toMatch(/Error/)
    expect(run.status).toBe(0)
    // A row of every table: the windows grow over the timed turns, and every contender has a figure.
    const row = run.stdout.match(/^\| ([\d,]+) \| (\d+) → (\d+) \|(( [\d,]+ \|){5}) [\d,]+ \(\d turns\) \|$/m)
    expect(row).not.toBeNull()
    expect(Number(row![3])).toBeGreaterThan(Number(row![2]))
    expect(run.stdout).toMatch(/^\| [\d,]+ \| [\d.]+ \| \d+ \| [\d,]+ \| [\d.]+ \| \d+ \| [\d,]+ \|$/m)
    expect(run.stdout).toContain("load average")
    expect(run.stdout).toMatch(/record a tool step, memory \(worst size\) µs: [\d.]+ \(target ≤ 250\)/)
  })
})
