/**
 * `pivot inspect` with --limit/--tail/--from/--to: the rows are cut, the headings still count the whole session (a
 * heading said "pruned outputs (1, ~110 tokens freed)" beside the tokens of all 2, and "pivots: none" when the pivot
 * was only outside the range), and every cut listing has its note.
 */
import { describe, expect, it } from "vitest"
import { fixture, pivot } from "./support/audit.ts"

describe("pivot inspect with limits", () => {
  it("given --limit 1, then the pruned outputs' heading counts all of them, as its tokens do", async () => {
    const all = await pivot("inspect", fixture("pruned.json"))
    const cut = await pivot("inspect", fixture("pruned.json"), "--limit", "1")
    expect(all.code).toBe(0)
    expect(cut.code).toBe(0)
    const heading = all.out.find((line) => line.startsWith("pruned outputs ("))!
    expect(heading).toMatch(/^pruned outputs \(2, ~[\d,]+ tokens freed\)$/)
    expect(cut.out).toContain(heading)
    expect(cut.out).toContain("  (showing 1 of 2 pruned outputs; see --limit, --tail, --from, --to)")
  })

  it("given a range past the pivot and the prune, then no heading says none, and the notes say what was cut", async () => {
    const cut = await pivot("inspect", fixture("compaction-tail.json"), "--from", "13")
    expect(cut.code).toBe(0)
    expect(cut.out).not.toContain("pivots: none")
    expect(cut.out).toContain("pivots (1)")
    expect(cut.out).toContain("  (showing 0 of 1 pivots; see --limit, --tail, --from, --to)")
    const pruned = await pivot("inspect", fixture("pruned.json"), "--to", "1")
    expect(pruned.out).not.toContain("pruned outputs: none")
    expect(pruned.out).not.toContain("usage over time: no model call reported usage")
    // The ledger's prune line is a listing too.
    expect(pruned.out).toContain("  (showing 0 of 1 prunes in the ledger; see --limit, --tail, --from, --to)")
  })
})
