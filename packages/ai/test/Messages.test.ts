import { type ModelMessage as Core, Message, ProviderError, Render } from "@pivot/core"
import type { Prepared } from "@pivot/runtime"
import {
  APICallError,
  generateText,
  modelMessageSchema,
  NoOutputGeneratedError,
  RetryError,
  StreamProviderError,
} from "ai"
import { MockLanguageModelV4 } from "ai/test"
import { Result, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { runs } from "../../core/test/support/runs.ts"
import * as Messages from "../src/Messages.ts"
import { USAGE } from "./support/Mock.ts"

// ---------------------------------------------------------------------------------------------------------------
// Arbitrary core model messages: every shape core's ModelMessage type allows.

const json: fc.Arbitrary<Core.JSONValue> = fc.jsonValue() as fc.Arbitrary<Core.JSONValue>
const textPart = fc.record({ type: fc.constant("text" as const), text: fc.string() })
const filePart: fc.Arbitrary<Core.FilePart> = fc.record(
  {
    type: fc.constant("file" as const),
    data: fc.oneof(
      fc.base64String().map((b) => `data:image/png;base64,${b}`),
      fc.webUrl({ validSchemes: ["https"] }),
    ),
    mediaType: fc.constantFrom("image/png", "application/pdf", "text/plain"),
    filename: fc.string({ minLength: 1 }),
  },
  { requiredKeys: ["type", "data", "mediaType"] },
)
const output: fc.Arbitrary<Core.ToolResultOutput> = fc.oneof(
  fc.record({ type: fc.constant("text" as const), value: fc.string() }),
  fc.record({ type: fc.constant("error-text" as const), value: fc.string() }),
  fc.record({ type: fc.constant("json" as const), value: json }),
  fc.record({
    type: fc.constant("content" as const),
    value: fc.array(
      fc.oneof(
        textPart,
        fc.record({
          type: fc.constant("file" as const),
          data: fc.record({ type: fc.constant("data" as const), data: fc.base64String() }),
          mediaType: fc.constant("image/png"),
        }),
      ),
      { maxLength: 3 },
    ),
  }),
)
const toolResult: fc.Arbitrary<Core.ToolResultPart> = fc.record({
  type: fc.constant("tool-result" as const),
  toolCallId: fc.string({ minLength: 1 }),
  toolName: fc.string({ minLength: 1 }),
  output,
})
const toolCall: fc.Arbitrary<Core.ToolCallPart> = fc.record(
  {
    type: fc.constant("tool-call" as const),
    toolCallId: fc.string({ minLength: 1 }),
    toolName: fc.string({ minLength: 1 }),
    input: fc.dictionary(fc.string(), json),
    providerExecuted: fc.boolean(),
  },
  { requiredKeys: ["type", "toolCallId", "toolName", "input"] },
)
const reasoning = fc.record({ type: fc.constant("reasoning" as const), text: fc.string() })

const modelMessage: fc.Arbitrary<Core.ModelMessage> = fc.oneof(
  fc.record({ role: fc.constant("system" as const), content: fc.string() }),
  fc.record({ role: fc.constant("user" as const), content: fc.array(fc.oneof(textPart, filePart), { maxLength: 4 }) }),
  fc.record({
    role: fc.constant("assistant" as const),
    content: fc.array(fc.oneof(textPart, filePart, reasoning, toolCall, toolResult), { maxLength: 5 }),
  }),
  fc.record({ role: fc.constant("tool" as const), content: fc.array(toolResult, { minLength: 1, maxLength: 3 }) }),
)

// ---------------------------------------------------------------------------------------------------------------

const stored = (value: unknown): Message.Message => Schema.decodeUnknownSync(Message.Message)(value)

const MODEL = { providerId: "openai", modelId: "gpt-test" }

const window: ReadonlyArray<Message.Message> = [
  stored({ role: "user", id: "msg_1", createdAt: 1, parts: [{ type: "text", id: "prt_1", text: "list the files" }] }),
  stored({
    role: "assistant",
    id: "msg_2",
    parentId: "msg_1",
    createdAt: 2,
    model: MODEL,
    tokens: { input: 1, output: 1, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
    finish: "tool-calls",
    parts: [
      { type: "step-start", id: "prt_2" },
      { type: "reasoning", id: "prt_3", text: "use ls" },
      {
        type: "tool",
        id: "prt_4",
        callId: "call_1",
        tool: "bash",
        state: { status: "completed", input: { command: "ls" }, output: "src\ntest" },
      },
      { type: "text", id: "prt_5", text: "Two folders." },
    ],
  }),
]

describe("Messages.toModelMessages", () => {
  it("is the identity over core's rendering, dropping only the source message ids", () => {
    const rendered = Render.render(window)
    const messages = Messages.toModelMessages(rendered)
    expect(messages).toEqual(rendered.map((entry) => entry.message))
    expect(messages.some((message) => "sourceMessageId" in message)).toBe(false)
    expect(Messages.toModelMessages(Render.toModelMessages(window))).toEqual(messages)
  })

  it("every core model message is accepted by the AI SDK's own ModelMessage schema", async () => {
    await fc.assert(
      fc.asyncProperty(modelMessage, async (message) => {
        const [converted] = Messages.toModelMessages([message])
        const result = await modelMessageSchema.safeParseAsync(converted)
        expect(result.success).toBe(true)
      }),
      runs(1000),
    )
  })

  it("a rendered window goes through generateText unchanged: the provider sees the tool call and its result", async () => {
    const model = new MockLanguageModelV4({
      doGenerate: async () => ({
        content: [{ type: "text", text: "ok" }],
        finishReason: { unified: "stop", raw: "stop" },
        usage: USAGE,
        warnings: [],
      }),
    })
    await generateText({ model, messages: Messages.toModelMessages(Render.render(window)) })
    const prompt = model.doGenerateCalls[0]?.prompt ?? []
    expect(prompt.map((message) => message.role)).toEqual(["user", "assistant", "tool"])
    expect(JSON.stringify(prompt[1])).toContain('"toolCallId":"call_1"')
    expect(JSON.stringify(prompt[2])).toContain("src\\ntest")
  })
})

describe("Messages usage", () => {
  const sdk = (over: {
    input?: number
    output?: number
    total?: number
    cacheRead?: number
    cacheWrite?: number
    reasoning?: number
  }) => ({
    inputTokens: over.input,
    inputTokenDetails: { noCacheTokens: undefined, cacheReadTokens: over.cacheRead, cacheWriteTokens: over.cacheWrite },
    outputTokens: over.output,
    outputTokenDetails: { textTokens: undefined, reasoningTokens: over.reasoning },
    totalTokens: over.total,
  })

  it("U1 input 1000, output 500, total 1500", () => {
    expect(Messages.toTokenUsage(sdk({ input: 1000, output: 500, total: 1500 }))).toEqual({
      input: 1000,
      output: 500,
      reasoning: 0,
      cacheRead: 0,
      cacheWrite: 0,
      total: 1500,
    })
  })

  it("U2 cache reads leave the input; U4 reasoning leaves the output", () => {
    const usage = Messages.toTokenUsage(sdk({ input: 1000, output: 500, total: 1500, cacheRead: 200, reasoning: 100 }))
    expect(usage).toMatchObject({ input: 800, cacheRead: 200, output: 400, reasoning: 100, total: 1500 })
  })

  it("U3/U5 cache writes come from the usage details, else from the anthropic provider metadata", () => {
    expect(Messages.toTokenUsage(sdk({ input: 1000, cacheRead: 200, cacheWrite: 300 })).input).toBe(500)
    const fromMetadata = Messages.toTokenUsage(sdk({ input: 1000, output: 500, total: 1500, cacheRead: 200 }), {
      anthropic: { cacheCreationInputTokens: 300 },
    })
    expect(fromMetadata).toMatchObject({ input: 500, cacheRead: 200, cacheWrite: 300, total: 1500 })
  })

  it("a step's usage is read with the step's provider metadata", () => {
    const step = {
      usage: sdk({ input: 50, output: 5 }),
      providerMetadata: { anthropic: { cacheCreationInputTokens: 10 } },
    }
    expect(Messages.stepTokenUsage(step)).toMatchObject({ input: 40, cacheWrite: 10, output: 5 })
  })

  it("the flat AI SDK 5 fields are read too", () => {
    expect(
      Messages.toTokenUsage({ inputTokens: 100, cachedInputTokens: 30, reasoningTokens: 4, outputTokens: 10 }),
    ).toMatchObject({ input: 70, cacheRead: 30, output: 6, reasoning: 4 })
  })

  it("conservation: input + cacheRead + cacheWrite = inputTokens and output + reasoning = outputTokens", () => {
    fc.assert(
      fc.property(
        fc.nat(1_000_000),
        fc.nat(1_000_000),
        fc.nat(1_000_000),
        fc.nat(1_000_000),
        fc.nat(1_000_000),
        (cacheRead, cacheWrite, extraInput, reasoning, extraOutput) => {
          const usage = Messages.toTokenUsage(
            sdk({
              input: cacheRead + cacheWrite + extraInput,
              cacheRead,
              cacheWrite,
              output: reasoning + extraOutput,
              reasoning,
            }),
          )
          expect(usage.input + usage.cacheRead + usage.cacheWrite).toBe(cacheRead + cacheWrite + extraInput)
          expect(usage.output + usage.reasoning).toBe(reasoning + extraOutput)
          expect(
            Math.min(usage.input, usage.output, usage.reasoning, usage.cacheRead, usage.cacheWrite),
          ).toBeGreaterThanOrEqual(0)
        },
      ),
      runs(1000),
    )
  })
})

describe("Messages errors → the overflow classifier", () => {
  const api = (statusCode: number, message: string, body?: unknown) =>
    new APICallError({
      message,
      url: "http://127.0.0.1/v1",
      requestBodyValues: {},
      statusCode,
      ...(body === undefined ? {} : { responseBody: JSON.stringify(body), data: body }),
      isRetryable: ProviderError.isRetryableStatus(statusCode),
    })

  it("an APICallError 413 is an overflow", () => {
    expect(Messages.isOverflow(api(413, "Payload Too Large"))).toBe(true)
  })

  it("E3 status 422 with body error.code context_length_exceeded is an overflow", () => {
    expect(Messages.isOverflow(api(422, "Request failed", { error: { code: "context_length_exceeded" } }))).toBe(true)
  })

  it("E4 a 429 without body is an APIError, not an overflow", () => {
    const error = Messages.classifyError(api(429, "429 status code (no body)"))
    expect(error.name).toBe(ProviderError.API_ERROR)
    expect(error.data).toMatchObject({ statusCode: 429, isRetryable: true })
  })

  it("an overflow message is recognised whatever the status", () => {
    expect(Messages.isOverflow(api(400, "This model's maximum context length is 8192 tokens"))).toBe(true)
  })

  it("E1 a stream error with code context_length_exceeded is an overflow with the fixed message", () => {
    const error = Messages.classifyError(
      new StreamProviderError({ message: "too long", code: "context_length_exceeded" }),
    )
    expect(error).toMatchObject({
      name: ProviderError.CONTEXT_OVERFLOW,
      message: ProviderError.STREAM_OVERFLOW_MESSAGE,
    })
  })

  it("raw stream chunks are classified, with or without the `{ type: 'error' }` envelope", () => {
    expect(Messages.isOverflow({ type: "error", error: { code: "context_length_exceeded" } })).toBe(true)
    expect(Messages.isOverflow({ error: { code: "context_length_exceeded", message: "x" } })).toBe(true)
    expect(Messages.isOverflow({ code: "context_length_exceeded", message: "x" })).toBe(true)
    expect(Messages.classifyError({ code: "server_error", message: "boom" })).toMatchObject({
      name: ProviderError.API_ERROR,
      message: "boom",
    })
  })

  it("a RetryError is classified by its last attempt; a NoOutputGeneratedError by its cause", () => {
    const retried = new RetryError({
      message: "Failed after 3 attempts",
      reason: "maxRetriesExceeded",
      errors: [api(503, "Service Unavailable"), api(413, "Payload Too Large")],
    })
    expect(Messages.isOverflow(retried)).toBe(true)
    const wrapped = new NoOutputGeneratedError({ cause: api(500, "Internal Server Error") })
    expect(Messages.classifyError(wrapped)).toMatchObject({ name: ProviderError.API_ERROR, data: { statusCode: 500 } })
  })

  it("a plain Error is classified by its message; a value without any message is an UnknownError", () => {
    expect(Messages.isOverflow(new Error("prompt is too long: 210000 tokens > 200000 maximum"))).toBe(true)
    expect(Messages.isOverflow(new Error("socket hang up"))).toBe(false)
    expect(Messages.classifyError(42).name).toBe("UnknownError")
  })

  it("toProviderFailure keeps status, body and the SDK's retry verdict of an APICallError", () => {
    const failure = Messages.toProviderFailure(api(500, "boom", { error: { message: "boom" } }))
    expect(failure).toMatchObject({ message: "boom", statusCode: 500, isRetryable: true })
    expect(failure).toHaveProperty("responseBody", JSON.stringify({ error: { message: "boom" } }))
  })
})

describe("Messages.validateUsage", () => {
  const sdkUsage = {
    inputTokens: 100,
    inputTokenDetails: { noCacheTokens: 80, cacheReadTokens: 20, cacheWriteTokens: undefined },
    outputTokens: 10,
    outputTokenDetails: { textTokens: 7, reasoningTokens: 3 },
    totalTokens: 110,
  }
  const problem = (usage: unknown) => {
    const result = Messages.validateUsage(usage)
    return Result.isFailure(result) ? result.failure.problem : undefined
  }

  it("accepts the AI SDK's usage as it comes, including counts of 0 and counts the provider did not give", () => {
    expect(problem(sdkUsage)).toBeUndefined()
    expect(problem({ inputTokens: 0, outputTokens: 0 })).toBeUndefined()
    expect(problem({ inputTokens: undefined, outputTokens: undefined })).toBeUndefined()
  })

  it("refuses missing fields, negative, fractional or non-numeric counts, and non-objects, naming what is wrong", () => {
    expect(problem({ outputTokens: 1 })).toBe("missing inputTokens (got outputTokens)")
    expect(problem({})).toBe("missing inputTokens, outputTokens (got no fields)")
    expect(problem({ inputTokens: -1, outputTokens: 1 })).toBe("inputTokens is -1, not a token count")
    expect(problem({ inputTokens: 1.5, outputTokens: 1 })).toBe("inputTokens is 1.5, not a token count")
    expect(problem({ inputTokens: 1, outputTokens: "2" })).toBe('outputTokens is "2", not a token count')
    expect(problem({ ...sdkUsage, outputTokenDetails: { reasoningTokens: -1 } })).toBe(
      "outputTokenDetails.reasoningTokens is -1, not a token count",
    )
    expect(problem(null)).toBe("expected an object, got null")
    expect(problem(42)).toBe("expected an object, got number")
  })
})

describe("ContextManager.prepare's modelMessages", () => {
  it("type-checks as the messages of generateText, with no cast (a fresh, mutable array)", () => {
    // Compile-time: this function stops compiling if `modelMessages` turns readonly or drifts from the SDK's shape.
    const call = (prepared: Prepared) =>
      generateText({ model: new MockLanguageModelV4(), messages: prepared.modelMessages })
    expect(typeof call).toBe("function")
  })
})
