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
import { type Billed, equivalents, type Provider, ProviderCache, RATES, TTL } from "./providerCache.ts"

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

/** A request as the floor reads it: its body, time, answer, and kind (`agent`, `title` or `summary`). */
export interface Kinded extends Timed {
  readonly kind: string
}

/**
 * What any strategy must pay for a session's requests, in input-token equivalents under `provider`'s multipliers:
 * - `writes`: every message of the conversation (agent and title calls) written once — each distinct message, by its
 *   JSON, at its first request — and the fixed prompt (the tool schemas and the leading system messages) written at
 *   the first call, again whenever it changes, and again after every pause longer than the TTL (the cache expired:
 *   nothing can read it);
 * - `reads`: the fixed prompt read from the cache by every other conversation call (no prune or compaction sheds it);
 * - `summariser`: each summariser call as sent (it shares no prefix with the agent's requests, OpenCode 1.18's
 *   `tools = {}` and its own system prompt, so its whole input is written or sent uncached) and its answer at the
 *   output rate: the calls the contender made, at their size;
 * - `output`: the conversation's own answers at the output rate.
 * What it leaves out is what a strategy can shed: re-reading the conversation beyond the fixed prompt, and writing a
 * prefix again after a rewrite. `billed` is the input alone (writes, reads, the summariser's input), as `Bill.billed`.
 */
export interface Floor {
  readonly writes: number
  readonly reads: number
  readonly summariser: number
  readonly output: number
  readonly billed: number
  readonly total: number
}

/** The fixed part of a prompt: the tool schemas and the system messages before the first other message. */
const fixedOf = (body: Body): string => {
  let text = JSON.stringify(body.tools ?? [])
  for (const message of body.messages) {
    if (message.role !== "system") break
    text += JSON.stringify(message)
  }
  return text
}

/** The floor of `requests` (in the order sent) under `provider`'s multipliers; see `Floor`. */
export const floorOf = (requests: ReadonlyArray<Kinded>, provider: Provider, ttl: number = TTL): Floor => {
  const rates = { ...RATES[provider], output: Pricing.PROVIDER_RATES[provider]!.output }
  const seen = new Set<string>()
  let written = 0
  let readTokens = 0
  let summariser = 0
  let output = 0
  // Each fixed prompt (the agent's, the title call's) and when the cache last served it.
  const fixedAt = new Map<string, number>()
  for (const request of requests) {
    if (request.kind === "summary") {
      summariser += Tokens.estimate(promptOf(request.body).text) * rates.write + (request.output ?? 0) * rates.output
      continue
    }
    output += (request.output ?? 0) * rates.output
    const fixed = fixedOf(request.body)
    const cachedAt = fixedAt.get(fixed)
    if (cachedAt !== undefined && request.at - cachedAt <= ttl) readTokens += Tokens.estimate(fixed)
    else written += Tokens.estimate(fixed)
    fixedAt.set(fixed, request.at)
    for (const message of request.body.messages) {
      if (message.role === "system") continue
      const json = JSON.stringify(message)
      if (seen.has(json)) continue
      seen.add(json)
      written += Tokens.estimate(json)
    }
  }
  const writes = written * rates.write
  const reads = readTokens * rates.read
  const summaryOutput = requests.filter((r) => r.kind === "summary").reduce((n, r) => n + (r.output ?? 0), 0)
  const summariserInput = summariser - summaryOutput * rates.output
  return {
    writes,
    reads,
    summariser,
    output,
    billed: writes + reads + summariserInput,
    total: writes + reads + summariser + output,
  }
}
