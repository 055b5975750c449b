import { Prompt } from "@pivot/core"
import { ContextManager } from "@pivot/runtime"
import { APICallError, generateText, jsonSchema, stepCountIs, streamText, ToolLoopAgent, tool } from "ai"
import { convertArrayToReadableStream, MockLanguageModelV4 } from "ai/test"
import { Effect } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import * as AiAgent from "../src/Agent.ts"
import * as AiSummarizer from "../src/Summarizer.ts"
import {
  answer,
  type CallOptions,
  finish,
  type GenerateResult,
  readTool,
  type StreamPart,
  textParts,
} from "./support/Mock.ts"
import { COMPACTION_MODEL, runtime, SESSION } from "./support/Runtime.ts"

type Runtime = ReturnType<typeof runtime>
let current: Runtime | undefined
afterEach(async () => {
  await current?.dispose()
  current = undefined
})
const start = (...args: Parameters<typeof runtime>) => {
  current = runtime(...args)
  return current
}

/** A scripted session model: one answer per call, in order. */
const scripted = (...steps: ReadonlyArray<GenerateResult | Error>) => {
  let index = 0
  return new MockLanguageModelV4({
    doGenerate: async () => {
      const step = steps[Math.min(index++, steps.length - 1)]
      if (step instanceof Error) throw step
      if (step === undefined) throw new Error("no scripted step")
      return step
    },
  })
}

const manager = <A, E>(rt: Runtime, use: (cm: ContextManager["Service"]) => Effect.Effect<A, E>) =>
  rt.runPromise(
    Effect.gen(function* () {
      return yield* use(yield* ContextManager)
    }),
  )

const promptText = (call: CallOptions | undefined) => JSON.stringify(call?.prompt ?? [])

/** A compaction model answering with a fixed summary. */
const compactor = () =>
  new MockLanguageModelV4({
    modelId: "compactor",
    doStream: async () => ({
      stream: convertArrayToReadableStream<StreamPart>([
        { type: "stream-start", warnings: [] },
        ...textParts("## Objective\n- make answer 42 in src/answer.ts"),
        finish(),
      ]),
    }),
  })

describe("AiAgent.stepParts", () => {
  it("maps a step to pivot parts in order: text, reasoning, tool calls with their outcome, and the step finish", () => {
    const content = [
      { type: "reasoning", text: "look first" },
      { type: "text", text: "Reading." },
      { type: "tool-call", toolCallId: "c1", toolName: "read", input: { path: "a.ts" } },
      { type: "tool-call", toolCallId: "c2", toolName: "bash", input: { command: "false" } },
      { type: "tool-call", toolCallId: "c3", toolName: "ask", input: "plain" },
      { type: "tool-call", toolCallId: "c4", toolName: "web_search", input: {}, providerExecuted: true },
      { type: "tool-result", toolCallId: "c1", toolName: "read", input: {}, output: { lines: 3 } },
      { type: "tool-error", toolCallId: "c2", toolName: "bash", input: {}, error: new Error("exit 1") },
      { type: "tool-result", toolCallId: "c4", toolName: "web_search", input: {}, output: "results" },
      { type: "source", sourceType: "url", id: "s", url: "https://example.com" },
    ]
    const parts = AiAgent.stepParts({
      content,
      finishReason: "tool-calls",
      usage: { inputTokens: 100, outputTokens: 10, totalTokens: 110 },
    })
    expect(parts).toEqual([
      { type: "step-start" },
      { type: "reasoning", text: "look first" },
      { type: "text", text: "Reading." },
      {
        type: "tool",
        callId: "c1",
        tool: "read",
        state: { status: "completed", input: { path: "a.ts" }, output: '{"lines":3}' },
      },
      {
        type: "tool",
        callId: "c2",
        tool: "bash",
        state: { status: "error", input: { command: "false" }, error: "exit 1" },
      },
      { type: "tool", callId: "c3", tool: "ask", state: { status: "pending", input: { value: "plain" } } },
      {
        type: "tool",
        callId: "c4",
        tool: "web_search",
        state: { status: "completed", input: {}, output: "results" },
        providerExecuted: true,
      },
      {
        type: "step-finish",
        reason: "tool-calls",
        tokens: { input: 100, output: 10, reasoning: 0, cacheRead: 0, cacheWrite: 0, total: 110 },
      },
    ])
  })
})

describe("AiAgent with generateText", () => {
  it("prepareStep sends the session's window and onStepEnd records each step with its tool results", async () => {
    const rt = start()
    // An earlier turn, recorded directly: the model must see it although the call only passes the new prompt.
    await manager(rt, (cm) =>
      Effect.gen(function* () {
        yield* cm.recordUserMessage(SESSION, { text: "earlier question about src/answer.ts" })
        yield* cm.recordAssistantStep(SESSION, {
          parts: [{ type: "text", text: "earlier answer" }],
          usage: { input: 10, output: 2, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
          finish: "stop",
        })
      }),
    )
    const model = scripted(
      answer(
        [{ type: "tool-call", toolCallId: "call_1", toolName: "read", input: '{"path":"src/answer.ts"}' }],
        "tool-calls",
      ),
      answer([{ type: "text", text: "The answer is 41; I will change it to 42." }], "stop"),
    )
    const pivot = AiAgent.fromRuntime(rt, { sessionId: SESSION })
    const result = await generateText({
      model,
      tools: { read: readTool },
      stopWhen: stepCountIs(5),
      ...pivot.settings,
      ...(await pivot.user("What is the answer?")),
    })
    expect(result.text).toBe("The answer is 41; I will change it to 42.")
    expect(model.doGenerateCalls).toHaveLength(2)
    const first = promptText(model.doGenerateCalls[0])
    expect(first).toContain("earlier question about src/answer.ts")
    expect(first).toContain("earlier answer")
    expect(first).toContain("What is the answer?")
    // The second call's input is pivot's window again, now holding the recorded tool call and its result.
    const second = promptText(model.doGenerateCalls[1])
    expect(second).toContain("call_1")
    expect(second).toContain("contents of src/answer.ts: export const answer = 41")
    const prepared = await manager(rt, (cm) => cm.prepare(SESSION))
    const roles = prepared.modelMessages.map((m) => m.role)
    expect(roles).toEqual(["user", "assistant", "user", "assistant", "tool", "assistant"])
    expect(pivot.lastPrepared()?.usage.tokens).toBeGreaterThan(0)
  })

  it("given an HTTP 413 from the session model, then run compacts with the compaction model and calls again", async () => {
    const compaction = compactor()
    const rt = start(
      AiSummarizer.layer({ model: (ref) => (ref.modelId === COMPACTION_MODEL.modelId ? compaction : model) }),
    )
    const overflow = new APICallError({
      message: "request entity too large",
      url: "http://127.0.0.1/v1/chat/completions",
      requestBodyValues: {},
      statusCode: 413,
      isRetryable: false,
    })
    const model = scripted(
      answer([{ type: "text", text: "Looking at the project." }], "stop"),
      overflow,
      answer([{ type: "text", text: "Done: answer is 42." }], "stop"),
    )
    const pivot = AiAgent.fromRuntime(rt, { sessionId: SESSION })
    await generateText({ model, maxRetries: 0, ...pivot.settings, ...(await pivot.user("Look at the project")) })
    const input = await pivot.user("Make the answer 42")
    const result = await pivot.run(() => generateText({ model, maxRetries: 0, ...pivot.settings, ...input }))
    expect(result.text).toBe("Done: answer is 42.")
    expect(pivot.lastError()?.action).toBe("compact")
    expect(pivot.lastError()?.error.name).toBe("ContextOverflowError")
    // The summary came from the compaction model, never from the session model.
    expect(compaction.doStreamCalls).toHaveLength(1)
    expect(model.doGenerateCalls).toHaveLength(3)
    const retried = promptText(model.doGenerateCalls[2])
    expect(retried).toContain("make answer 42 in src/answer.ts")
    // The overflowing turn is replayed after the summary (spec §2.8 step 13), once.
    expect(retried.split("Make the answer 42").length - 1).toBe(1)
    expect(retried).not.toContain("Looking at the project.")
  })

  it("given a step whose usage fills the context, then the next step starts from the summary and a continue message", async () => {
    const compaction = compactor()
    const rt = start(AiSummarizer.layer({ model: compaction }))
    const model = scripted(
      answer(
        [{ type: "tool-call", toolCallId: "call_1", toolName: "read", input: '{"path":"src/answer.ts"}' }],
        "tool-calls",
        90_000,
      ),
      answer([{ type: "text", text: "Changed it." }], "stop"),
    )
    const pivot = AiAgent.fromRuntime(rt, { sessionId: SESSION })
    const result = await generateText({
      model,
      tools: { read: readTool },
      stopWhen: stepCountIs(5),
      ...pivot.settings,
      ...(await pivot.user("Make the answer 42")),
    })
    expect(result.text).toBe("Changed it.")
    expect(compaction.doStreamCalls).toHaveLength(1)
    const second = promptText(model.doGenerateCalls[1])
    expect(second).toContain("make answer 42 in src/answer.ts")
    expect(second).toContain(Prompt.CONTINUE_TEXT)
    expect(pivot.lastPrepared()?.compaction).toBeDefined()
  })

  it("a tool without execute stays pending until recordToolResult, then the window carries its result", async () => {
    const rt = start()
    const model = scripted(
      answer(
        [{ type: "tool-call", toolCallId: "call_ask", toolName: "ask", input: '{"question":"Which file?"}' }],
        "tool-calls",
      ),
      answer([{ type: "text", text: "Thanks, editing src/answer.ts." }], "stop"),
    )
    const ask = tool({
      description: "Ask the user",
      inputSchema: jsonSchema<{ question: string }>({ type: "object", properties: { question: { type: "string" } } }),
      outputSchema: jsonSchema<string>({ type: "string" }),
    })
    const pivot = AiAgent.fromRuntime(rt, { sessionId: SESSION })
    await generateText({ model, tools: { ask }, ...pivot.settings, ...(await pivot.user("Fix it")) })
    expect(await pivot.recordToolResult("unknown_call", { output: "x" })).toBeUndefined()
    const recorded = await pivot.recordToolResult("call_ask", { output: "src/answer.ts" })
    expect(recorded?.events.map((e) => e._tag)).toEqual(["ToolResultRecorded"])
    const result = await generateText({ model, tools: { ask }, ...pivot.settings, prompt: "" })
    expect(result.text).toBe("Thanks, editing src/answer.ts.")
    expect(promptText(model.doGenerateCalls[1])).toContain("src/answer.ts")
    expect(promptText(model.doGenerateCalls[1])).not.toContain("[Tool execution was interrupted]")
  })

  it("works from an Effect program through AiAgent.make", async () => {
    const rt = start()
    const model = scripted(answer([{ type: "text", text: "hello" }], "stop"))
    const text = await rt.runPromise(
      Effect.gen(function* () {
        const pivot = yield* AiAgent.make({ sessionId: SESSION })
        const result = yield* Effect.promise(async () =>
          generateText({ model, ...pivot.settings, ...(await pivot.user("hi")) }),
        )
        return result.text
      }),
    )
    expect(text).toBe("hello")
    expect(promptText(model.doGenerateCalls[0])).toContain("hi")
  })
})

describe("AiAgent with streamText", () => {
  it("a context_length_exceeded chunk midway is reported with the partial output; run compacts and streams again", async () => {
    const compaction = compactor()
    const rt = start(AiSummarizer.layer({ model: compaction }))
    let calls = 0
    const model = new MockLanguageModelV4({
      doStream: async () => {
        calls++
        const parts: Array<StreamPart> =
          calls === 1
            ? [
                ...textParts("Let me"),
                { type: "error", error: { code: "context_length_exceeded", message: "too long" } },
                finish("error"),
              ]
            : [...textParts("All done."), finish("stop")]
        return { stream: convertArrayToReadableStream<StreamPart>([{ type: "stream-start", warnings: [] }, ...parts]) }
      },
    })
    const pivot = AiAgent.fromRuntime(rt, { sessionId: SESSION })
    const { prompt } = await pivot.user("Refactor src/answer.ts")
    const text = await pivot.run(async () => {
      const result = streamText({ model, ...pivot.settings, prompt })
      await result.consumeStream()
      return result.text
    })
    expect(text).toBe("All done.")
    expect(pivot.lastError()?.error.name).toBe("ContextOverflowError")
    expect(compaction.doStreamCalls).toHaveLength(1)
    expect(model.doStreamCalls).toHaveLength(2)
    // Only one user turn: nothing is left to summarise before it, so the replay is cancelled (C12) and the model
    // gets the summary and the overflow continue message instead.
    const retried = JSON.stringify(model.doStreamCalls[1]?.prompt)
    expect(retried).toContain("make answer 42 in src/answer.ts")
    expect(retried).toContain("previous request exceeded the provider's size limit")
  })
})

describe("AiAgent with ToolLoopAgent", () => {
  it("the agent class takes the settings: each step goes through pivot", async () => {
    const rt = start()
    const model = scripted(
      answer(
        [{ type: "tool-call", toolCallId: "call_1", toolName: "read", input: '{"path":"README.md"}' }],
        "tool-calls",
      ),
      answer([{ type: "text", text: "The README says hello." }], "stop"),
    )
    const pivot = AiAgent.fromRuntime(rt, { sessionId: SESSION })
    const agent = new ToolLoopAgent({ model, tools: { read: readTool }, ...pivot.settings })
    const result = await pivot.run(async () => agent.generate(await pivot.user("Summarise the README")))
    expect(result.text).toBe("The README says hello.")
    expect(result.steps).toHaveLength(2)
    expect(promptText(model.doGenerateCalls[1])).toContain("contents of README.md")
    const usage = await manager(rt, (cm) => cm.usage(SESSION))
    expect(usage.source).toBe("reported")
    expect(usage.tokens).toBe(1_010)
  })
})
