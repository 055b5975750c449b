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
import { CacheAwareStrategy, Conversation, type Events, type Ids, type Message, Strategy, Tail } from "@pivot/core"
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

describe("cache-aware waits for a new request before compacting by its own choice (ADR 0047, the real auto-compaction capture)", () => {
  // The capture's second turn ("read b.txt") ends with an answer, and the real OpenCode then compacted and called the
  // model again with no new request (its continuation). Folded up to that answer, the window holds two ~10k reads in
  // a 20k window (16k usable): a new turn of the first's size would go over the usable window, so at a turn's start
  // cache-aware compacts (ADR 0041). With no new request the next call continues the turn: a compaction there keeps
  // none of it (the turn's read is read again) and spares nothing the next request's start would not.
  const messages = (() => {
    const events = eventsOf("auto-compaction")
    const secondAnswer = events.findIndex(
      (e, i) =>
        i > 0 &&
        e._tag === "AssistantStepRecorded" &&
        e.message.finish === "stop" &&
        events.slice(0, i).filter((o) => o._tag === "AssistantStepRecorded" && o.message.finish === "stop").length ===
          1,
    )
    let conversation = Conversation.initial
    for (const e of events.slice(0, secondAnswer + 1)) conversation = Conversation.evolve(conversation, e)
    return Conversation.messages(conversation)
  })()
  const limits = { context: 20_000, output: 4_000 }
  const inputOf = (window: ReadonlyArray<Message.Message>): Strategy.Input => ({
    messages: window,
    now: window.at(-1)!.createdAt + 1_000,
    cache: { lastCallAt: window.at(-1)!.createdAt, ttl: 300_000, cold: false, atPivot: false },
    config: CacheAwareStrategy.configure({}),
    limits,
    compactionLimits: limits,
    prune: {},
    rates: undefined,
    mayCompact: true,
    fixed: 524,
  })

  it("given the window after the second turn's answer, then no compaction; with the next request, one", () => {
    const strategy = CacheAwareStrategy.make()
    expect(messages.at(-1)?.role).toBe("assistant")
    expect(Tail.sizeOf(messages)).toBeGreaterThan(16_000 / 2)
    expect(strategy.beforeCall!(inputOf(messages))).toEqual(Strategy.nothing)
    const next: Message.Message = {
      role: "user",
      id: "msg_next" as Ids.MessageId,
      createdAt: messages.at(-1)!.createdAt + 1_000,
      parts: [{ type: "text", id: "prt_next" as Ids.PartId, text: "read c.txt d.txt" }],
    } as Message.Message
    expect(strategy.beforeCall!(inputOf([...messages, next]))).toEqual({ _tag: "Compact", reason: "threshold" })
  })
})
