/**
 * `pivot whatif` on the demo's database (what `npm start` writes; slow lane: the demo runs first): every recorded
 * model call replayed under each strategy, the recorded summaries reused where a strategy summarises the same
 * messages (the demo compacts with OpenCode's 1.17 rules, so `opencode-1.17` reuses some), its provider error left
 * out and counted, and the database unchanged.
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Demo from "../src/demo/Demo.ts"
import * as Example from "../src/demo/Example.ts"
import { plain } from "../src/demo/Style.ts"
import { pivot } from "./support/audit.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-whatif-demo-"))
const db = path.join(dir, "demo.db")
let outcome: Demo.Outcome

beforeAll(async () => {
  outcome = await Demo.run({ example: Example.load(Example.bundledPath), db, out: () => {}, style: plain, width: 100 })
}, 180_000)

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const hash = () => createHash("sha256").update(fs.readFileSync(db)).digest("hex")

describe("pivot whatif on the demo's database", () => {
  it("replays every recorded call under each strategy and leaves the database as it was", async () => {
    const before = hash()
    const result = await pivot(
      "whatif",
      "--db",
      db,
      "--session",
      outcome.sessionId,
      "--context",
      "64000",
      "--output",
      "8000",
      "--format",
      "json",
    )
    expect(result.err).toEqual([])
    expect(result.code).toBe(0)
    expect(hash()).toBe(before)
    const comparison = JSON.parse(result.stdout)
    const events = outcome.events.map((l) => l.event)
    const steps = events.filter((e) => e._tag === "AssistantStepRecorded" && e.message.summary !== true).length
    expect(comparison.model).toEqual({ providerId: "demo", modelId: "scripted-coder-64k" })
    expect(comparison.providerErrors).toBe(events.filter((e) => e._tag === "ProviderErrorReported").length)
    expect(comparison.runs.map((r: { strategy: string }) => r.strategy)).toEqual([
      "opencode-1.17",
      "opencode-1.18",
      "pivot",
      "cache-aware",
    ])
    for (const run of comparison.runs) {
      expect(run.calls).toBe(steps)
      expect(run.summaries.recorded + run.summaries.extractive).toBe(run.compactions)
    }
    expect(comparison.runs[0].summaries.recorded).toBeGreaterThan(0)
  }, 180_000)
})
