/**
 * A scripted AI SDK language model: it implements the provider interface (`LanguageModelV4`), so the AI SDK calls it
 * exactly as it would call a real provider, and answers each call with what a script says. Its token usage is
 * measured, never written down: the input is the estimate of the prompt it actually received (messages, system
 * prompt and tool definitions), the output the estimate of what it answered. Like a real provider it rejects a prompt
 * larger than its context with a `context_length_exceeded` error. It records every call, so tests can compare what
 * the model saw with what pivot says it sent.
 */
import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4GenerateResult,
  LanguageModelV4Prompt,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
  LanguageModelV4Usage,
} from "@ai-sdk/provider"
import { Tokens } from "@pivot/core"
import { APICallError } from "ai"

/** What the model answers to one call: content in order, and why it stopped. */
export interface Reply {
  readonly content: ReadonlyArray<LanguageModelV4Content>
  readonly finish: "stop" | "tool-calls"
}

/** One call the model received. */
export interface Call {
  readonly prompt: LanguageModelV4Prompt
  /** Estimated tokens of the prompt and the tool definitions: the usage the model reports. */
  readonly inputTokens: number
  readonly outputTokens: number
  readonly reasoningTokens: number
  /** Set when the model refused the prompt as larger than its context. */
  readonly rejected?: string | undefined
}

/** How to build a scripted model. */
export interface Options {
  /** The provider name the AI SDK reports (`scripted.chat` → provider `scripted`). */
  readonly provider: string
  readonly modelId: string
  /** Prompts with more input tokens than this are refused; no limit when absent. */
  readonly contextLimit?: number | undefined
  /** The answer to a call the model accepted. */
  readonly respond: (options: LanguageModelV4CallOptions) => Reply
  /** Told when the model refused a call. */
  readonly refused?: (() => void) | undefined
}

/** The estimated tokens of a call's input: the prompt as received plus the tool definitions sent with it. */
export const inputTokensOf = (options: Pick<LanguageModelV4CallOptions, "prompt" | "tools">): number =>
  Tokens.estimate(JSON.stringify(options.prompt)) +
  (options.tools === undefined || options.tools.length === 0 ? 0 : Tokens.estimate(JSON.stringify(options.tools)))

/** The estimated tokens of an answer: text and tool-call inputs as output, reasoning apart (as providers report). */
export const outputTokensOf = (
  content: ReadonlyArray<LanguageModelV4Content>,
): { readonly output: number; readonly reasoning: number } => {
  let output = 0
  let reasoning = 0
  for (const part of content) {
    if (part.type === "text") output += Tokens.estimate(part.text)
    else if (part.type === "tool-call") output += Tokens.estimate(part.input)
    else if (part.type === "reasoning") reasoning += Tokens.estimate(part.text)
  }
  return { output, reasoning }
}

/** The provider error of a prompt over the context, worded as OpenAI-compatible servers word it. */
export const contextExceeded = (limit: number, tokens: number, url: string): APICallError => {
  const message = `This model's maximum context length is ${limit} tokens. However, your messages resulted in ${tokens} tokens.`
  return new APICallError({
    message,
    url,
    requestBodyValues: {},
    statusCode: 400,
    responseBody: JSON.stringify({
      error: { message, type: "invalid_request_error", code: "context_length_exceeded" },
    }),
    isRetryable: false,
  })
}

const usageOf = (input: number, output: number, reasoning: number): LanguageModelV4Usage => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: output + reasoning, text: output, reasoning },
})

/** A language model that plays a script through the AI SDK's provider interface. */
export class ScriptedModel implements LanguageModelV4 {
  readonly specificationVersion = "v4" as const
  readonly provider: string
  readonly modelId: string
  readonly supportedUrls: Record<string, Array<RegExp>> = {}
  /** Every call received, in order (refused ones included). */
  readonly calls: Array<Call> = []
  readonly #options: Options

  constructor(options: Options) {
    this.provider = options.provider
    this.modelId = options.modelId
    this.#options = options
  }

  /** Measures the prompt, refuses it when it is over the context, else answers it; records the call either way. */
  #answer(options: LanguageModelV4CallOptions): { readonly reply: Reply; readonly usage: LanguageModelV4Usage } {
    const input = inputTokensOf(options)
    const limit = this.#options.contextLimit
    if (limit !== undefined && input > limit) {
      const error = contextExceeded(limit, input, `scripted://${this.provider}/${this.modelId}`)
      this.calls.push({
        prompt: options.prompt,
        inputTokens: input,
        outputTokens: 0,
        reasoningTokens: 0,
        rejected: error.message,
      })
      this.#options.refused?.()
      throw error
    }
    const reply = this.#options.respond(options)
    const { output, reasoning } = outputTokensOf(reply.content)
    this.calls.push({ prompt: options.prompt, inputTokens: input, outputTokens: output, reasoningTokens: reasoning })
    return { reply, usage: usageOf(input, output, reasoning) }
  }

  async doGenerate(options: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> {
    const { reply, usage } = this.#answer(options)
    return {
      content: [...reply.content],
      finishReason: { unified: reply.finish, raw: reply.finish },
      usage,
      warnings: [],
    }
  }

  async doStream(options: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamResult> {
    const { reply, usage } = this.#answer(options)
    const parts: Array<LanguageModelV4StreamPart> = [{ type: "stream-start", warnings: [] }]
    for (const [i, part] of reply.content.entries()) {
      const id = String(i)
      if (part.type === "text")
        parts.push({ type: "text-start", id }, { type: "text-delta", id, delta: part.text }, { type: "text-end", id })
      else if (part.type === "reasoning")
        parts.push(
          { type: "reasoning-start", id },
          { type: "reasoning-delta", id, delta: part.text },
          { type: "reasoning-end", id },
        )
      else parts.push(part as LanguageModelV4StreamPart)
    }
    parts.push({ type: "finish", usage, finishReason: { unified: reply.finish, raw: reply.finish } })
    return {
      stream: new ReadableStream<LanguageModelV4StreamPart>({
        start(controller) {
          for (const part of parts) controller.enqueue(part)
          controller.close()
        },
      }),
    }
  }
}
