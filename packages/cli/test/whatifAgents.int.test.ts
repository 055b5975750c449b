/**
 * `pivot whatif` on the sessions real agents recorded (packages/agents/test/fixtures/recorded: Claude Code and Codex
 * CLI run offline against a scripted model), imported with `pivot import`: every strategy replays each recorded call,
 * bills it, and counts the agent's compactions, from the database opened read-only.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { importTranscript } from "@pivot/agents"
import { afterAll, describe, expect, it } from "vitest"
import { pivot, repoRoot, tempDir } from "./support/audit.ts"

const dir = tempDir()
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const recorded = path.join(repoRoot, "packages/agents/test/fixtures/recorded")
const sessions = fs
  .readdirSync(recorded)
  .filter((f) => f.endsWith(".jsonl"))
  .map((f) => {
    const result = importTranscript(fs.readFileSync(path.join(recorded, f), "utf8"), { final: true })!
    const calls = result.events.filter((e) => e._tag === "AssistantStepRecorded").length
    return { file: f, sessionId: result.sessionId, calls, compactions: result.report.compactions }
  })

describe("pivot whatif on recorded Claude Code and Codex CLI sessions", () => {
  const db = path.join(dir, "recorded.db")

  it("given the recorded folder imported, then whatif replays each session's calls under every strategy", async () => {
    expect(sessions.map((s) => s.file)).toEqual(["claude-code-2.1.332.jsonl", "codex-0.171.0.jsonl"])
    expect((await pivot("import", recorded, "--db", db)).code).toBe(0)
    const before = fs.readFileSync(db)
    for (const session of sessions) {
      // Neither scripted model is in pivot's catalog: the window is given.
      const run = await pivot(
        "whatif",
        "--db",
        db,
        "--session",
        session.sessionId,
        "--context",
        "200000",
        "--output",
        "32000",
        "--format",
        "json",
      )
      expect(run.err).toEqual([])
      expect(run.code).toBe(0)
      const comparison = JSON.parse(run.stdout)
      expect(comparison.runs.map((r: { strategy: string }) => r.strategy)).toEqual([
        "opencode-1.17",
        "opencode-1.18",
        "pivot",
        "cache-aware",
      ])
      for (const r of comparison.runs) {
        expect(r.calls).toBe(session.calls)
        expect(r.billing.billed).toBeGreaterThan(0)
        expect(r.compactions).toBeGreaterThan(0)
      }
    }
    expect(fs.readFileSync(db).equals(before)).toBe(true)
  })
})
