// Forks racing a writer with real processes on one SQLite file (issue 32, defect 3), through the probe
// (scripts/bench/forks.ts): several processes fork one parent into the same id while another process records on its
// own session. Exactly one fork is stored, every other process answers `ForkTargetExists` (before the fix, 9 of 10
// answered `StoreUnavailable`: `database is locked`), and the writer loses nothing. The same waits on the clock are
// `ForkLocked.int.test.ts`.

import { execFileSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const probe = fileURLToPath(new URL("../../../scripts/bench/forks.ts", import.meta.url))

describe("forks into one id from several processes beside a writer", () => {
  it("given 6 processes forking a 3,000-event parent into one id, then one fork is stored, the others answer ForkTargetExists, and the writer never fails", () => {
    const out = execFileSync(
      process.execPath,
      ["--conditions=@pivot/source", probe, "--size", "3000", "--forkers", "6", "--writer-ms", "3000"],
      { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
    )
    const report = JSON.parse(out.trim().split("\n").at(-1)!)
    expect(report.answers).toEqual({ ok: 1, ForkTargetExists: 5 })
    expect(report.writer.failed).toBe(0)
    expect(report.writer.ok).toBeGreaterThan(0)
    // The child holds the parent's events and its SessionForked, once.
    expect(report.childVersion).toBe(report.parentVersion + 1)
  }, 300_000)
})
