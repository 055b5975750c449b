// `pivot projections status`: the built-in read models with their progress, as users' projections show theirs — a
// session left behind by a version bump counts as lag until `rebuild` (or a read) folds it.
import * as fs from "node:fs"
import * as path from "node:path"
import { DatabaseSync } from "node:sqlite"
import { afterAll, describe, expect, it } from "vitest"
import { fixture, pivot, tempDir } from "./support/audit.ts"

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
    expect((await pivot("projections", "rebuild", "usage", "--db", db)).code).toBe(0)
    expect((await status()).find((row) => row.name === "usage")?.status).toMatchObject({ lag: 0, keys: 1 })
  })
})
