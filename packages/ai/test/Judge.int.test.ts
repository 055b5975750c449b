// A compaction's probes through the AI SDK (issue 20 item 5): `createPivot({ probes: { judge } })` with a judge
// `MockLanguageModelV4` that answers from the prompt it receives (the summary and the numbered questions), on a real
// SQLite file; `AiJudge` on its own (what it sends, its usage, its failures).
import * as Path from "node:path"
import { Events, Ledger, Probe } from "@pivot/core"
import { JudgeError } from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { generateText, jsonSchema, stepCountIs, tool } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import { Cause, Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { answerFromPrompt } from "../../runtime/test/support/judge.ts"
import { AiJudge, createPivot } from "../src/index.ts"
import { answer, type CallOptions, type GenerateResult, tempDirs } from "./support/Mock.ts"

const tempDir = tempDirs("pivot-judge-")

const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.map((p) => (p?.type === "text" ? p.text : "")).join("")
      : ""

/** A judge model that reads its prompt and answers from the summary in it; it records what it was sent. */
const readingJudge = () => {
  const calls: Array<CallOptions> = []
  const model = new MockLanguageModelV4({
    provider: "anthropic.messages",
    modelId: "judge-small",
    doGenerate: async (options): Promise<GenerateResult> => {
      calls.push(options)
      const prompt = options.prompt
        .filter((m) => m.role === "user")
        .map((m) => textOf(m.content))
        .join("\n")
      return answer([{ type: "text", text: answerFromPrompt(prompt) }], "stop", 400)
    },
  })
  return { model, calls }
}

const readTool = tool({
  description: "Read a file",
  inputSchema: jsonSchema<{ path: string }>({
    type: "object",
    properties: { path: { type: "string" } },
    required: ["path"],
  }),
  execute: async ({ path }) => `contents of ${path}`,
})

describe("createPivot with probes", () => {
  it("after a compaction, the judge model answers the probes from the summary it is sent; the graded answers are recorded beside the pivot", async () => {
    const file = Path.join(tempDir(), "pivot.db")
    let step = 0
    const model = new MockLanguageModelV4({
      doGenerate: async () =>
        step++ === 0
          ? answer(
              [{ type: "tool-call", toolCallId: "c1", toolName: "read", input: '{"path":"src/a.ts"}' }],
              "tool-calls",
            )
          : answer([{ type: "text", text: "done" }], "stop", 95_000),
    })
    // The summary names the file as read, not the request: the judge can answer one question, not the other.
    const summarizer = new MockLanguageModelV4({
      doGenerate: async () => answer([{ type: "text", text: "Read src/a.ts\nNothing else happened." }], "stop"),
    })
    const judge = readingJudge()
    const pivot = await createPivot({
      model,
      store: file,
      limits: { context: 100_000, output: 8_000 },
      session: "s",
      summarizer,
      summarizerMode: "generate",
      probes: { judge: judge.model },
    })
    await pivot.run("fix the parser crash", (turn) =>
      generateText(pivot.wrap({ model, tools: { read: readTool }, stopWhen: stepCountIs(5), ...turn })),
    )
    await pivot.user("next")
    await pivot.messages() // the window is full: a compaction, then its probes
    await pivot.close()

    expect(judge.calls).toHaveLength(1)
    const sent = judge.calls[0]!
    expect(sent.prompt[0]).toEqual({ role: "system", content: Probe.SYSTEM })
    expect(sent.tools ?? []).toEqual([])
    const events = await Effect.runPromise(
      Effect.gen(function* () {
        const store = yield* EventStore
        return (yield* store.read("session-ses_s")).map((r) => Events.decode(r.data))
      }).pipe(Effect.provide(EventStore.layerSqlite({ filename: file }))),
    )
    const probes = events.find((e) => e._tag === "ProbesAnswered")
    if (probes?._tag !== "ProbesAnswered") throw new Error("no ProbesAnswered recorded")
    const summary = events.find((e) => e._tag === "SummaryFinished")
    // The judge was sent the summary as stored (with pivot's facts block).
    expect(textOf(sent.prompt[1]?.content)).toContain(
      summary?._tag === "SummaryFinished" ? (summary.summary.parts[0] as { text: string }).text : "missing",
    )
    expect(probes.model).toEqual({ providerId: "anthropic", modelId: "judge-small" })
    expect(probes.usage).toMatchObject({ input: 400, output: 10 })
    const found = Object.fromEntries(probes.probes.map((p) => [p.kind, p.expected.map((e) => [e.text, e.found])]))
    expect(found).toEqual({
      request: [
        ["fix the parser crash", false],
        ["next", false],
      ],
      "file-read": [["src/a.ts", true]],
    })
    expect(probes.probes.find((p) => p.kind === "request")?.answer).toBe("unknown")
    // Billed in the ledger as the judge's call.
    const call = Ledger.calls(Ledger.fold(events)).find((c) => c.kind === "probe")
    expect(call?.usage).toMatchObject({ input: 400, output: 10 })
  })
})

describe("AiJudge", () => {
  const request = { sessionId: "ses_x", markerId: "msg_m", system: "sys", prompt: "[1] q", maxOutputTokens: 123 }

  it("sends the system prompt, the prompt and the output cap, and answers with the text, usage and model", async () => {
    const judge = readingJudge()
    const response = await Effect.runPromise(AiJudge.make({ model: judge.model }).answer(request))
    expect(judge.calls[0]?.maxOutputTokens).toBe(123)
    expect(judge.calls[0]?.prompt[0]).toEqual({ role: "system", content: "sys" })
    expect(response.text).toBe("[1] unknown")
    expect(response.usage).toMatchObject({ input: 400, output: 10 })
    expect(response.model).toEqual({ providerId: "anthropic", modelId: "judge-small" })
  })

  it("given a model that fails or answers nothing, then a JudgeError in one line", async () => {
    for (const [doGenerate, pattern] of [
      [
        async () => {
          throw new Error("judge down")
        },
        /judge down/,
      ],
      [async () => answer([], "stop"), /^the judge returned no text \(finish: stop\)$/],
    ] as const) {
      const exit = await Effect.runPromiseExit(
        AiJudge.make({ model: new MockLanguageModelV4({ doGenerate }), maxRetries: 0 }).answer(request),
      )
      const error = Exit.isFailure(exit) ? Cause.findErrorOption(exit.cause) : undefined
      expect(error?._tag === "Some" && error.value).toBeInstanceOf(JudgeError)
      expect(error?._tag === "Some" ? error.value.message : "").toMatch(pattern)
    }
  })
})
