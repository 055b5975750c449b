/** The scripted model: a real AI SDK provider model whose usage is measured on the prompt it receives. */
import { Messages } from "@pivot/ai"
import { APICallError, generateText, jsonSchema, streamText, tool } from "ai"
import { describe, expect, it } from "vitest"
import { inputTokensOf, type Reply, ScriptedModel } from "../src/demo/ScriptedModel.ts"

const answer = (text: string): Reply => ({ content: [{ type: "text", text }], finish: "stop" })

const model = (options: { contextLimit?: number; refused?: () => void } = {}) =>
  new ScriptedModel({ provider: "demo.chat", modelId: "m", respond: () => answer("ok"), ...options })

describe("ScriptedModel", () => {
  it("given two prompts through generateText, then the input usage is the estimate of each received prompt", async () => {
    const m = model()
    const short = await generateText({ model: m, prompt: "hi" })
    const long = await generateText({ model: m, prompt: "hi ".repeat(2_000) })
    expect(m.calls).toHaveLength(2)
    expect(short.usage.inputTokens).toBe(inputTokensOf(m.calls[0]!))
    expect(long.usage.inputTokens).toBe(inputTokensOf(m.calls[1]!))
    expect(long.usage.inputTokens! - short.usage.inputTokens!).toBeGreaterThan(1_400)
    expect(short.usage.outputTokens).toBe(1)
  })

  it("given tools, then their definitions count as input too", async () => {
    const m = model()
    const read = tool({
      description: "Read a file of the project, with a long description that costs tokens on every call",
      inputSchema: jsonSchema<{ filePath: string }>({ type: "object", properties: { filePath: { type: "string" } } }),
      execute: async () => "content",
    })
    const bare = await generateText({ model: m, prompt: "hi" })
    const withTools = await generateText({ model: m, prompt: "hi", tools: { read } })
    expect(withTools.usage.inputTokens! - bare.usage.inputTokens!).toBeGreaterThan(20)
  })

  it("given a prompt over its context, then it refuses with an overflow error pivot recognises, and says so", async () => {
    let refused = 0
    const m = model({ contextLimit: 50, refused: () => refused++ })
    const error = await generateText({ model: m, prompt: "word ".repeat(500), maxRetries: 0 }).catch((e) => e)
    expect(APICallError.isInstance(error)).toBe(true)
    expect(Messages.isOverflow(error)).toBe(true)
    expect(refused).toBe(1)
    expect(m.calls[0]?.rejected).toMatch(/maximum context length is 50 tokens/)
  })

  it("given streamText, then the stream carries the same reasoning, text, tool call and usage", async () => {
    const m = new ScriptedModel({
      provider: "demo.chat",
      modelId: "m",
      respond: () => ({
        content: [
          { type: "reasoning", text: "thinking it over" },
          { type: "text", text: "reading it" },
          { type: "tool-call", toolCallId: "c1", toolName: "read", input: '{"filePath":"a.ts"}' },
        ],
        finish: "tool-calls",
      }),
    })
    const result = streamText({ model: m, prompt: "go" })
    await result.consumeStream()
    expect(await result.text).toBe("reading it")
    expect(await result.reasoningText).toBe("thinking it over")
    expect((await result.toolCalls).map((c) => [c.toolName, c.input])).toEqual([["read", { filePath: "a.ts" }]])
    const usage = await result.usage
    expect(usage.inputTokens).toBe(m.calls[0]!.inputTokens)
    expect(usage.outputTokens).toBe(m.calls[0]!.outputTokens + m.calls[0]!.reasoningTokens)
  })
})
