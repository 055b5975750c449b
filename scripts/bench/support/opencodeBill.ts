// The bill of requests captured from the real OpenCode (bench:opencode): each chat-completions request body the scripted
// model received, serialised as a provider sees it (tool schemas, then the system messages, then the conversation),
// with the cache breakpoints OpenCode itself sets for Anthropic models, billed through support/providerCache.ts.
//
// OpenCode 1.18 (ProviderTransform.applyCaching, packages/opencode/src/provider/transform.ts) marks the first two system
// messages and the last two non-system messages `cacheControl: ephemeral` when the model is an Anthropic one. The
// provider's prefix order is tools, system, messages, so the first breakpoint also covers the tool schemas. The
// captured bodies are in OpenAI's chat format (one `tool` message per tool result): with one tool call per step, as
// the bench's script makes them, its messages are the AI SDK's one for one.
import { Pricing, Tokens } from "@pivot/core"
import { type Billed, equivalents, type Provider, ProviderCache, TTL } from "./providerCache.ts"

/** A request body as the scripted model received it (only what the bill reads). */
export interface Body {
  readonly messages: ReadonlyArray<{ readonly role: string }>
  readonly tools?: ReadonlyArray<unknown> | undefined
}

/** A captured request and when it was sent, in simulated milliseconds. */
export interface Timed {
  readonly body: Body
  readonly at: number
  /** The model's answer in tokens (its text and tool-call arguments), billed at the provider's output rate. */
  readonly output?: number | undefined
}

/** A request as the provider's cache sees it: the serialised prompt and OpenCode's Anthropic breakpoints in it. */
export interface Prompt {
  readonly text: string
  /** Character offsets in `text`, ascending, where a cache breakpoint ends a message. */
  readonly breakpoints: ReadonlyArray<number>
  /** Where the last message begins in `text` (its length when there is none). */
  readonly lastStart: number
}

/** Serialises a body: the tool schemas, then each message, as JSON; breakpoints where OpenCode puts them. */
export const promptOf = (body: Body): Prompt => {
  let text = JSON.stringify(body.tools ?? [])
  const ends: Array<number> = []
  let lastStart = text.length
  for (const message of body.messages) {
    lastStart = text.length
    text += JSON.stringify(message)
    ends.push(text.length)
  }
  const system = body.messages.flatMap((m, i) => (m.role === "system" ? [i] : [])).slice(0, 2)
  const final = body.messages.flatMap((m, i) => (m.role === "system" ? [] : [i])).slice(-2)
  const marked = [...new Set([...system, ...final])].sort((a, b) => a - b)
  return { text, breakpoints: marked.map((i) => ends[i]!), lastStart }
}

/** One request's bill. */
export interface Line extends Billed {
  /** The whole prompt in tokens (the project's estimate, characters / 4). */
  readonly tokens: number
  readonly characters: number
  /**
   * The cache was warm (the previous request within the TTL) but this prompt does not start with the previous one
   * up to that one's last message (a message only ever sent last, as drive mode's HUD, is no break).
   */
  readonly broke: boolean
  /** More than the TTL since the previous request: the cache was cold. */
  readonly cold: boolean
  /** The model's answer, in tokens. */
  readonly output: number
}

/** A session's bill under one provider's rules. */
export interface Bill {
  readonly lines: ReadonlyArray<Line>
  readonly input: number
  readonly cacheRead: number
  readonly cacheWrite: number
  /** Billed input in input-token equivalents (uncached input + reads and writes at the provider's multipliers). */
  readonly billed: number
  /** The model's answers, in tokens. */
  readonly output: number
  /** `billed` and the output at the provider's output rate (core `Pricing.PROVIDER_RATES`), in input-token equivalents. */
  readonly total: number
  readonly breaks: number
  readonly colds: number
  readonly characters: number
  /** Tokens read from the cache over all input tokens. */
  readonly hitRate: number
}

/**
 * Bills `requests` (in the order sent) under `provider`'s cache rules, one cache for all of them (one API key).
 * A break is a request sent within the TTL of the previous one whose prompt does not start with the previous prompt
 * up to its last message: the prefix was rewritten (a compaction, a pruned or rewritten message), not expired.
 */
export const bill = (requests: ReadonlyArray<Timed>, provider: Provider, ttl: number = TTL): Bill => {
  const cache = new ProviderCache(provider, ttl)
  const lines: Array<Line> = []
  let previous: { prefix: string; at: number } | undefined
  for (const request of requests) {
    const prompt = promptOf(request.body)
    const billed = cache.bill(prompt.text, request.at, prompt.breakpoints)
    const cold = previous !== undefined && request.at - previous.at > ttl
    const broke = previous !== undefined && !cold && !prompt.text.startsWith(previous.prefix)
    lines.push({
      ...billed,
      tokens: Tokens.estimate(prompt.text),
      characters: prompt.text.length,
      broke,
      cold,
      output: request.output ?? 0,
    })
    previous = { prefix: prompt.text.slice(0, prompt.lastStart), at: request.at }
  }
  const sum = (f: (l: Line) => number) => lines.reduce((n, l) => n + f(l), 0)
  const input = sum((l) => l.input)
  const cacheRead = sum((l) => l.cacheRead)
  const cacheWrite = sum((l) => l.cacheWrite)
  const all = input + cacheRead + cacheWrite
  const billed = equivalents({ input, cacheRead, cacheWrite }, provider)
  const output = sum((l) => l.output)
  return {
    lines,
    input,
    cacheRead,
    cacheWrite,
    billed,
    output,
    total: billed + output * Pricing.PROVIDER_RATES[provider]!.output,
    breaks: lines.filter((l) => l.broke).length,
    colds: lines.filter((l) => l.cold).length,
    characters: sum((l) => l.characters),
    hitRate: all === 0 ? 0 : cacheRead / all,
  }
}
