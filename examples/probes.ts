// Probes and the HUD's cost line: after a compaction, a judge model answers questions about the summarised span from
// the summary alone, pivot grades and records the answers; the model's HUD shows what the session has cost so far.
// Runs offline: scripted models (the judge answers from the prompt it is sent). Writes data/probes.db.
import { createPivot } from "@pivot/ai"
import { generateText, stepCountIs } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import { fresh } from "./support/fresh.ts"
import { tools } from "./support/models.ts"

type Settings = NonNullable<ConstructorParameters<typeof MockLanguageModelV4>[0]>
type Generated = Awaited<ReturnType<Extract<Settings["doGenerate"], (...args: never) => unknown>>>
const reply = (content: Generated["content"], input: number): Generated => ({
  content,
  finishReason: { unified: content[0]?.type === "tool-call" ? "tool-calls" : "stop", raw: "stop" },
  usage: {
    inputTokens: { total: input, noCache: input / 10, cacheRead: (input * 9) / 10, cacheWrite: undefined },
    outputTokens: { total: 20, text: 20, reasoning: 0 },
  },
  warnings: [],
})
const say = (text: string, input: number) => reply([{ type: "text", text }], input)
const read = (path: string, input: number) =>
  reply([{ type: "tool-call", toolCallId: `call_${input}`, toolName: "read", input: JSON.stringify({ path }) }], input)

// The agent reads a file, then its answer fills the window (95k of 100k): the next turn compacts first.
const script = [read("src/answer.ts", 1_200), say("It exports 41.", 95_000), say("Done.", 3_000)]
const systems: Array<string> = []
const model = new MockLanguageModelV4({
  provider: "anthropic.messages",
  modelId: "claude-sonnet-4-5",
  doGenerate: async ({ prompt }) => {
    systems.push(prompt.flatMap((m) => (m.role === "system" ? [m.content] : [])).join("\n"))
    return script[systems.length - 1] ?? say("done", 3_000)
  },
})
const summarizer = new MockLanguageModelV4({
  provider: "anthropic.messages",
  modelId: "claude-haiku-4-5",
  doGenerate: async () => say("## Objective\nThe user wants to know what the answer module exports.", 96_000),
})
// The judge reads its prompt: it names the paths the summary holds for questions about files, the objective for
// the user's request, and answers "unknown" otherwise.
const judge = new MockLanguageModelV4({
  provider: "anthropic.messages",
  modelId: "claude-haiku-4-5",
  doGenerate: async ({ prompt }) => {
    const text = prompt
      .flatMap((m) => (m.role === "user" ? m.content : []))
      .map((p) => (p.type === "text" ? p.text : ""))
    const [summary = "", questions = ""] = text.join("").split("</summary>")
    const paths = [...new Set(summary.match(/[\w-]+\/[\w./-]+\.\w+/g) ?? [])]
    const answers = [...questions.matchAll(/^\[(\d+)\] (.*)$/gm)].map(([, n, q]) =>
      /files/.test(q!) && paths.length > 0
        ? `[${n}] ${paths.join(", ")}`
        : /user ask/.test(q!)
          ? `[${n}] ${summary.split("## Objective\n")[1]?.split("\n")[0] ?? "unknown"}`
          : `[${n}] unknown`,
    )
    return say(answers.join("\n"), 1_500)
  },
})

// #region probes
const pivot = await createPivot({
  model,
  store: fresh("data/probes.db"),
  session: "probed",
  limits: { context: 100_000, output: 8_000 },
  summarizer,
  probes: { judge }, // after each compaction: questions about its span, answered from the summary
  hud: { cost: true }, // the HUD's cost line: spend so far, the last compaction's net saving, cache hits
})
const turn = (text: string) =>
  pivot.run(text, (t) =>
    generateText({ ...pivot.wrap({ model, tools, stopWhen: stepCountIs(3), instructions: "Be brief." }), ...t }),
  )
await turn("What does src/answer.ts export?")
await turn("Thanks. Anything else?") // compacts first: the summary, then its probes
// #endregion
console.log("the HUD's cost line right after the compaction:")
console.log(systems[2]?.split("\n").find((line) => line.startsWith("cost:")))
await pivot.close()
