// `pivot projections status`: the built-in read models with their progress, as users' projections show theirs — a
// session left behind by a version bump counts as lag until `rebuild` (or a read) folds it.
import * as fs from "node:fs"
import * as path from "node:path"
import { DatabaseSync } from "node:sqlite"
import type { Projection } from "@pivot/core"
import { EventStore, Projections } from "@pivot/store"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { fixture, pivot, plainStore, tempDir } from "./support/audit.ts"

const dir = tempDir()
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe("pivot projections", () => {
  it("status shows each built-in read model's sessions and lag, and rebuild of one brings it back to current", async () => {
    const db = path.join(dir, "pj.db")
    expect((await pivot("import", fixture("compaction-tail.json"), "--db", db)).code).toBe(0)
    const read = new DatabaseSync(db, { readOnly: true })
    const events = Number((read.prepare("SELECT COUNT(*) AS n FROM pivot_events").get() as { n: number }).n)
    read.close()
    const status = async () => {
      const result = await pivot("projections", "status", "--db", db, "--format", "json")
      expect(result.code).toBe(0)
      return JSON.parse(result.out.join("\n")) as Array<{
        name: string
        kind: string
        status?: { lag: number; keys: number; head: number }
      }>
    }
    const current = (await status()).filter((row) => row.kind === "built-in")
    expect(current.map((row) => row.name)).toEqual([
      "window",
      "usage",
      "compaction-history",
      "prune-index",
      "audit",
      "recall",
      "timeline",
    ])
    for (const row of current) expect(row.status).toMatchObject({ lag: 0, keys: 1, head: events })
    // As if the usage read model's code had moved to a new version since the import.
    const write = new DatabaseSync(db)
    write.exec("UPDATE pivot_rm_checkpoints SET projection_version = 0 WHERE model = 'usage'")
    write.close()
    const behind = await status()
    expect(behind.find((row) => row.name === "usage")?.status).toMatchObject({ lag: events, keys: 0 })
    expect(behind.find((row) => row.name === "window")?.status).toMatchObject({ lag: 0, keys: 1 })
    const text = await pivot("projections", "status", "--db", db)
    expect(text.out.find((line) => line.startsWith("usage "))).toContain(`${events} events behind`)
    // --format json answers JSON here too (it printed the text line).
    const rebuilt = await pivot("projections", "rebuild", "usage", "--db", db, "--format", "json")
    expect(rebuilt.code).toBe(0)
    expect(JSON.parse(rebuilt.stdout)).toEqual({ name: "usage", kind: "built-in", sessions: 1 })
    expect((await status()).find((row) => row.name === "usage")?.status).toMatchObject({ lag: 0, keys: 1 })
  })
})

describe("pivot projections, refused", () => {
  it("rebuild of a name the database does not know fails in one line and leaves the file byte for byte", async () => {
    // A plain store (as the demo writes): a read-write open would add the read side's tables and fold the log.
    const db = await plainStore(path.join(dir, "plain.db"))
    const before = fs.readFileSync(db)
    const result = await pivot("projections", "rebuild", "nope", "--db", db)
    expect(result.code).toBe(1)
    expect(result.err).toHaveLength(1)
    expect(result.err[0]).toMatch(/^pivot projections: unknown projection nope in .* \(known: window, usage,/)
    expect(fs.readFileSync(db).equals(before)).toBe(true)
  })

  it("a wrong action is one line, the usage and a pointer to the help, exit 2", async () => {
    const result = await pivot("projections", "bogus", "--db", path.join(dir, "none.db"))
    expect(result.code).toBe(2)
    expect(result.err).toEqual([
      "pivot projections: unknown action bogus: one of list, status, rebuild",
      "Usage: pivot projections [list|status|rebuild NAME] [--db FILE] [--format text|json]",
      'Run "pivot projections --help" for its flags and examples.',
    ])
  })
})

describe("pivot projections --help", () => {
  it("says what rebuild does to a projection of yours: it resets it, the next process that registers it rebuilds it", async () => {
    const help = await pivot("projections", "--help")
    expect(help.code).toBe(0)
    expect(help.stdout.replace(/\s+/g, " ")).toContain(
      "rebuild NAME rebuilds a built-in read model from the events, or resets one of yours so that the next process that registers it rebuilds it",
    )
  })
})

describe("pivot projections status, leases", () => {
  it("names the process holding a projection's lease, and no one once the lease has run out", async () => {
    const db = path.join(dir, "leases.db")
    const counter: Projection.Projection<number> = {
      name: "counter",
      version: 1,
      initial: 0,
      evolve: (n) => n + 1,
    }
    await Effect.runPromise(
      Effect.gen(function* () {
        const store = yield* EventStore
        yield* store.append("session-ses_lease", "any", [
          {
            id: "evt_lease_1",
            type: "SessionStarted",
            version: 1,
            data: { _tag: "SessionStarted", at: 1, sessionId: "ses_lease" },
          },
        ])
      }).pipe(Effect.provide(Projections.layerSqlite({ filename: db, projections: [Projections.async(counter)] }))),
    )
    const lease = async (owner: string, until: number) => {
      const write = new DatabaseSync(db)
      write.prepare("UPDATE pivot_pj_status SET owner = ?, lease_until = ? WHERE name = 'counter'").run(owner, until)
      write.close()
      const result = await pivot("projections", "status", "--db", db)
      expect(result.code).toBe(0)
      return result.out.find((line) => line.startsWith("counter "))!
    }
    expect(await lease("pj-live", Date.now() + 3_600_000)).toMatch(/, lease pj-live$/)
    // The process that held it ended an hour ago without releasing it.
    expect(await lease("pj-gone", Date.now() - 3_600_000)).not.toContain("lease")
  })
})
