/**
 * Cache-aware on a real OpenCode capture in a window that forces compaction (ADR 0041): the oracle's captures of the
 * real OpenCode 1.18.33 replayed by `WhatIf` in the 20,000-token window of its compaction scenarios (16,000 usable,
 * a ~0.5k system prompt). Compaction pays nothing by reads there. `manual-compaction`: four turns of ~6.5k tokens, each
 * a read and an answer; a turn reaches cache-aware's trigger only with its last call, so compacting at its start
 * spares nothing (ADR 0041) — before that rule cache-aware compacted three times there where OpenCode 1.18 compacts
 * once, and billed more. It must compact no more often, bill no more, and keep the working set on every call.
 */
import * as fs from "node:fs"
import { gunzipSync } from "node:zlib"
import type { Events } from "@pivot/core"
import { Import } from "@pivot/opencode"
import { WhatIf } from "@pivot/runtime"
import { Effect, Result } from "effect"
import { describe, expect, it } from "vitest"
import { fixture } from "./support/audit.ts"

const eventsOf = (scenario: string): ReadonlyArray<Events.Event> => {
  const text = gunzipSync(fs.readFileSync(fixture(`oracle/${scenario}.export.json.gz`))).toString("utf8")
  const result = Import.importText(text)
  if (Result.isFailure(result)) throw new Error(result.failure.message)
  return result.success.events
}

const compare = (scenario: string, rules: "anthropic" | "openai") => {
  return Effect.runPromise(
    WhatIf.session(`ses_${scenario}`, eventsOf(scenario), {
      context: 20_000,
      output: 4_000,
      strategies: ["opencode-1.18", "cache-aware"],
      rules,
    }),
  )
}

describe("cache-aware where the window forces compaction (the oracle's real captures, a 20k window)", () => {
  it.each([
    ["manual-compaction", "anthropic"],
    ["manual-compaction", "openai"],
  ] as const)("given %s under %s rules, then cache-aware bills no more than OpenCode 1.18", async (scenario, rules) => {
    const comparison = await compare(scenario, rules)
    const [opencode, cacheAware] = comparison.runs
    expect(cacheAware!.billing.cost).toBeLessThanOrEqual(opencode!.billing.cost)
    expect(cacheAware!.compactions).toBeLessThanOrEqual(opencode!.compactions)
    expect(cacheAware!.workingSet.intact).toBe(cacheAware!.workingSet.calls)
  })
})
