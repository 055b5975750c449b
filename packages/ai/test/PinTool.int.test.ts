// The `context_pin` tool end to end with a scripted model on a real SQLite file: the model pins a decision by quoting
// it, compacts twice with `context_compact`, and every prompt after the pivots still carries the decision verbatim;
// the pin is a `ContextPinned` event by the model. Refusals are answers the model reads, not failures.
import * as Path from "node:path"
import { EventStore } from "@pivot/store"
import { stepCountIs, ToolLoopAgent } from "ai"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { createPivot, PinTool } from "../src/index.ts"
import { answer, toolCall as call, scriptedAgent, tempDirs } from "./support/Mock.ts"

const LIMITS = { context: 100_000, output: 8_000 }
const DECISION = "Decision: fan-out uses pg_notify, never polling."

const tempDir = tempDirs("pivot-pin-tool-")
const tempFile = () => Path.join(tempDir(), "pivot.db")

/** Pins on "pin it", compacts on "compact", answers otherwise; keeps every prompt and tool result it got. */
const agentModel = () =>
  scriptedAgent((prompt, calls) => {
    const last = prompt.at(-1)
    const asked = last?.role === "user" ? JSON.stringify(last) : ""
    if (asked.includes("pin it")) return call(`p${calls}`, "context_pin", { quote: "pg_notify, never polling" })
    if (asked.includes("pin nothing")) return call(`n${calls}`, "context_pin", { quote: "no such words anywhere" })
    if (asked.includes("compact")) return call(`c${calls}`, "context_compact", {})
    return answer([{ type: "text", text: `answer ${calls}` }], "stop")
  })

describe("context_pin through createPivot and a ToolLoopAgent", () => {
  it("the model pins a decision by quoting it, and every prompt after two pivots carries it verbatim", async () => {
    const file = tempFile()
    const { model, prompts } = agentModel()
    const pivot = await createPivot({
      model,
      store: file,
      limits: LIMITS,
      summarizer: false,
      config: { pin_first_message: false },
    })
    let answers: Array<string> = []
    try {
      const agent = new ToolLoopAgent(pivot.wrap({ model, tools: pivot.tools, stopWhen: stepCountIs(3) }))
      await pivot.run("hello", (turn) => agent.generate(turn))
      await pivot.run(DECISION, (turn) => agent.generate(turn))
      const pinned = await pivot.run("pin it", (turn) => agent.generate(turn))
      answers = pinned.steps.flatMap((s) => s.toolResults.map((r) => String(r.output)))
      const refused = await pivot.run("pin nothing", (turn) => agent.generate(turn))
      answers.push(...refused.steps.flatMap((s) => s.toolResults.map((r) => String(r.output))))
      for (const text of ["turn a", "compact now", "turn b", "turn c", "compact again", "after"])
        await pivot.run(text, (turn) => agent.generate(turn))
      const pins = await pivot.pins()
      expect(pins.pins).toEqual([expect.objectContaining({ by: "model", role: "user", preview: DECISION })])
      expect(PinTool.listText(pins)).toContain(DECISION)
    } finally {
      await pivot.close()
    }
    expect(answers[0]).toMatch(/^Pinned: it stays verbatim in your context after every compaction/)
    expect(answers[1]).toBe('Not pinned: no message of this session contains "no such words anywhere"')
    // The last prompt comes after two pivots (two summaries were made), and still carries the decision verbatim.
    const last = JSON.stringify(prompts.at(-1)!)
    expect(last).toContain(JSON.stringify(DECISION).slice(1, -1))
    expect(last).not.toContain('"text":"turn a"')
    const events = await Effect.runPromise(
      Effect.gen(function* () {
        const store = yield* EventStore
        return yield* store.read(`session-${pivot.sessionId}`)
      }).pipe(Effect.provide(EventStore.layerSqlite({ filename: file }))),
    )
    expect(events.filter((e) => e.type === "SummaryFinished")).toHaveLength(2)
    expect(events.filter((e) => e.type === "ContextPinned").map((e) => (e.data as { by: string }).by)).toEqual([
      "model",
    ])
  })
})
