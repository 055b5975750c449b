// What the examples' scripted models answer: `doGenerate` results of `MockLanguageModelV4` (from `ai/test`), with the
// usage a provider reports, built in one place for every scripted model of the examples.
import type { MockLanguageModelV4 } from "ai/test"

type Settings = NonNullable<ConstructorParameters<typeof MockLanguageModelV4>[0]>
/** A `doGenerate` result. */
export type Generated = Awaited<ReturnType<Extract<Settings["doGenerate"], (...args: never) => unknown>>>
/** The prompt a scripted model is called with, as far as the scripts read it. */
export type Prompt = ReadonlyArray<{ readonly role: string; readonly content: unknown }>

/** A provider's usage: `input` prompt tokens, none read from a cache, and 20 of output. */
export const usage = (input: number): Generated["usage"] => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: undefined },
  outputTokens: { total: 20, text: 20, reasoning: 0 },
})

/** An answer of `content`, finished as `unified`, after a prompt of `input` tokens. */
export const answer = (content: Generated["content"], unified: "stop" | "tool-calls", input: number): Generated => ({
  content,
  finishReason: { unified, raw: unified },
  usage: usage(input),
  warnings: [],
})

/** A text answer after a prompt of `input` tokens. */
export const text = (said: string, input: number): Generated => answer([{ type: "text", text: said }], "stop", input)

/** One call of `toolName` with `args` (id `id`) after a prompt of `input` tokens. */
export const toolCall = (id: string, toolName: string, args: unknown, input: number): Generated =>
  answer([{ type: "tool-call", toolCallId: id, toolName, input: JSON.stringify(args) }], "tool-calls", input)

/** The prompt's last message when it is a tool's result: the tool's name and its output as text. */
export const lastToolResult = (prompt: Prompt): { readonly tool: string; readonly text: string } | undefined => {
  const last = prompt.at(-1)
  if (last?.role !== "tool") return undefined
  const part = (last.content as ReadonlyArray<{ toolName: string; output: { value: unknown } }>)[0]
  return part === undefined ? undefined : { tool: part.toolName, text: String(part.output.value) }
}
