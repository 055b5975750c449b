/**
 * `pivot window` without current read models (an export file, or a database the runtime alone wrote) folds the window,
 * the prune marks and the sources from one reading of the log (issue 32, third round: it read and decoded the log
 * twice, three times with `--sources`). What it prints must equal what the read models give on the same session.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { fixture, pivot, tempDir } from "./support/audit.ts"

const dir = tempDir()
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe("window folded from the log", () => {
  it("given a session as an export and imported into a database, then every view prints the same lines", async () => {
    const file = fixture("pruned.json")
    const db = path.join(dir, "imported.db")
    expect((await pivot("import", file, "--db", db)).code).toBe(0)
    const views: ReadonlyArray<ReadonlyArray<string>> = [
      [],
      ["--sources"],
      ["--at", "3"],
      ["--at", "3", "--sources"],
      ["--tail", "2"],
      ["--format", "json"],
      ["--at", "2", "--format", "json"],
    ]
    let pruneMarks = 0
    for (const view of views) {
      const fromLog = await pivot("window", file, ...view)
      const fromReadModels = await pivot("window", "--db", db, ...view)
      expect(fromLog.code).toBe(0)
      expect(fromLog.err).toEqual([])
      expect(fromLog.out).toEqual(fromReadModels.out)
      pruneMarks += fromLog.out.filter((line) => line.includes("✂ pruned")).length
    }
    // The session has a pruned output, so the marks folded from the log are compared too.
    expect(pruneMarks).toBeGreaterThan(0)
  })
})
