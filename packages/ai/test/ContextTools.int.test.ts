// The context tools end to end through createPivot and a real AI SDK loop on a real SQLite file: the HUD is in every
// system prompt with the usage read model's numbers, and a model that calls `context_compact` starts its next step
// from the new pivot.
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { Hud } from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { generateText, stepCountIs } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { ContextTools, createPivot, type Pivot } from "../src/index.ts"
import { answer, type GenerateResult } from "./support/Mock.ts"

const LIMITS = { context: 100_000, output: 8_000 }
const dirs: Array<string> = []
const opened: Array<Pivot.Pivot> = []
afterEach(async () => {
  for (const pivot of opened.splice(0)) await pivot.close()
  for (const dir of dirs.splice(0)) Fs.rmSync(dir, { recursive: true, force: true })
})
const open = async (options: Omit<Pivot.CreateOptions, "store">) => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "pivot-tools-"))
  dirs.push(dir)
  const pivot = await createPivot({ ...options, store: Path.join(dir, "pivot.db"), limits: LIMITS, summarizer: false })
  opened.push(pivot)
  return pivot
}

/** A model answering from a script; it records every prompt it was sent. */
const scripted = (...steps: ReadonlyArray<GenerateResult>) => {
  let index = 0
  const prompts: Array<ReadonlyArray<{ readonly role: string; readonly content: unknown }>> = []
  const model = new MockLanguageModelV4({
    doGenerate: async (options) => {
      prompts.push(options.prompt as never)
      const step = steps[Math.min(index++, steps.length - 1)]
      if (step === undefined) throw new Error("no scripted step")
      return step
    },
  })
  return { model, prompts }
}

const systemOf = (prompt: ReadonlyArray<{ readonly role: string; readonly content: unknown }>) =>
  prompt
    .filter((m) => m.role === "system")
    .map((m) => String(m.content))
    .join("\n")

const textOf = (message: { readonly content: unknown } | undefined): string =>
  message === undefined ? "" : typeof message.content === "string" ? message.content : JSON.stringify(message.content)

describe("context tools through createPivot", () => {
  it("the HUD follows the caller's instructions in every step, with the usage read model's numbers", async () => {
    const { model, prompts } = scripted(
      answer([{ type: "text", text: "looking" }], "stop", 40_000),
      answer([{ type: "text", text: "done" }], "stop", 52_000),
    )
    const pivot = await open({ model, hud: true, session: "hud" })
    const settings = pivot.wrap({ model, instructions: "You are a careful engineer." })
    await pivot.run("first", (turn) => generateText({ ...settings, ...turn }))
    const usageAfterFirst = await pivot.usage()
    await pivot.run("second", (turn) => generateText({ ...settings, ...turn }))
    expect(prompts).toHaveLength(2)
    for (const prompt of prompts) {
      const system = systemOf(prompt)
      expect(system.startsWith("You are a careful engineer.\n\n[pivot context status]")).toBe(true)
      expect(system).toContain(Hud.HEADER)
    }
    // The second call's HUD shows the usage recorded after the first call.
    const second = systemOf(prompts[1]!)
    expect(second).toContain(
      `context: ${usageAfterFirst.tokens.toLocaleString("en-US")} / ${usageAfterFirst.usable.toLocaleString("en-US")}`,
    )
    expect(second).toContain(`level ${Hud.level(usageAfterFirst.tokens, usageAfterFirst.usable)}`)
  })

  it("given no hud option, then the caller's instructions go out unchanged", async () => {
    const { model, prompts } = scripted(answer([{ type: "text", text: "ok" }], "stop", 1_000))
    const pivot = await open({ model, session: "plain" })
    await pivot.run("hi", (turn) => generateText({ ...pivot.wrap({ model, instructions: "Be brief." }), ...turn }))
    expect(systemOf(prompts[0]!)).toBe("Be brief.")
  })

  it("a model that calls context_compact gets a clear result, and its next step starts from the new pivot", async () => {
    const { model, prompts } = scripted(
      answer([{ type: "text", text: "reading the code" }], "stop", 20_000),
      answer(
        [
          {
            type: "tool-call",
            toolCallId: "call_1",
            toolName: "context_compact",
            input: JSON.stringify({ focus: "the parser rewrite" }),
          },
        ],
        "tool-calls",
        30_000,
      ),
      answer([{ type: "text", text: "continuing" }], "stop", 5_000),
    )
    const pivot = await open({ model, session: "compact" })
    const settings = pivot.wrap({ model, tools: { ...pivot.tools }, stopWhen: stepCountIs(5) })
    await pivot.run("look around", (turn) => generateText({ ...settings, ...turn }))
    const result = await pivot.run("rewrite the parser", (turn) => generateText({ ...settings, ...turn }))
    expect(result.steps[0]?.toolResults[0]?.output).toBe(
      ContextTools.compactResult({ outcome: { status: "finished" } as never }),
    )
    // The step after the tool call starts with the marker and the summary.
    const next = prompts[2]!
    const firstUser = next.find((m) => m.role === "user")
    expect(textOf(firstUser)).toContain("What did we do so far?")
    const events = await pivot.runtime.runPromise(
      Effect.flatMap(EventStore, (store) => store.read(`session-${pivot.sessionId}`)),
    )
    const tags = events.map((e) => e.type)
    expect(tags).toContain("CompactionRequestedByModel")
    expect(tags).toContain("SummaryFinished")
  })

  it("one context_compact call makes one pivot, and the next step's HUD shows the new window (issue 18)", async () => {
    // The calling step reports 95,000 tokens (over the 92,000 trigger), measured before the compaction its call ran.
    const { model, prompts } = scripted(
      answer([{ type: "text", text: "reading" }], "stop", 60_000),
      answer(
        [{ type: "tool-call", toolCallId: "call_c", toolName: "context_compact", input: "{}" }],
        "tool-calls",
        95_000,
      ),
      answer([{ type: "text", text: "continuing" }], "stop", 4_000),
    )
    const pivot = await open({ model, hud: true, session: "fresh" })
    const settings = pivot.wrap({ model, instructions: "Work.", tools: pivot.tools, stopWhen: stepCountIs(5) })
    await pivot.run("look around", (turn) => generateText({ ...settings, ...turn }))
    await pivot.run("go on", (turn) => generateText({ ...settings, ...turn }))
    const events = await pivot.runtime.runPromise(
      Effect.flatMap(EventStore, (store) => store.read(`session-${pivot.sessionId}`)),
    )
    expect(events.filter((e) => e.type === "CompactionRequested")).toHaveLength(1)
    expect(events.filter((e) => e.type === "SummaryFinished")).toHaveLength(1)
    const status = systemOf(prompts[2]!).match(/context: ([\d,]+) \/ 92,000 tokens \(\d+%\), level (\w+)/)
    expect(status?.[2]).toBe("ok")
    expect(Number(status?.[1]?.replaceAll(",", ""))).toBeLessThan(5_000)
    expect(await pivot.usage()).toMatchObject({ source: "reported", tokens: 4_010 }) // input and output of the last call
  })

  it("a second request in the same user turn is declined with a clear result, not an error", async () => {
    const call = (id: string) =>
      answer([{ type: "tool-call", toolCallId: id, toolName: "context_compact", input: "{}" }], "tool-calls", 30_000)
    const { model } = scripted(
      answer([{ type: "text", text: "working" }], "stop", 20_000),
      call("call_a"),
      call("call_b"),
      answer([{ type: "text", text: "ok" }], "stop", 5_000),
    )
    const pivot = await open({ model, session: "twice" })
    const settings = pivot.wrap({ model, tools: pivot.tools, stopWhen: stepCountIs(5) })
    await pivot.run("start", (turn) => generateText({ ...settings, ...turn }))
    const result = await pivot.run("go", (turn) => generateText({ ...settings, ...turn }))
    const outputs = result.steps.flatMap((s) => s.toolResults.map((r) => r.output))
    expect(outputs[1]).toBe(ContextTools.DECLINED["once-per-turn"])
  })
})
