/**
 * When compacting pays, for cache-aware mode (ADR 0017): a rent-or-buy rule over what the calls of the current cache
 * segment were billed. Each call reads the part of the window that grew since the segment began from the provider's
 * cache (the rent: `read` × that part, per call); a compaction sheds it once, for the summariser reading the window,
 * the summary's output and the next call writing the new base (the buy). Compacting once the rent paid so far
 * reaches the buy never costs more than twice the best choice made knowing the future (the ski-rental bound), and
 * uses only what the runtime knows: the calls' own context counts and times, the latest summary's size, the tail
 * budget, the cache's TTL and the rates. A segment begins at the latest pivot or at the latest call on a cold cache,
 * since both wrote their whole prefix anew: what was paid before is sunk.
 */
import { strip } from "./Facts.ts"
import type { Message } from "./Message.ts"
import type { Rates } from "./Pricing.ts"
import { contextCount, estimate } from "./Tokens.ts"

/** What a token of each kind costs in input tokens (`Pricing.Rates` without its provenance). */
export type Multipliers = Pick<Rates, "read" | "write" | "output">

/** The summary size assumed before a session has one (a model's summary of a coding session is often 1–3k tokens). */
export const DEFAULT_SUMMARY_TOKENS = 2_000

/** The calls of the current cache segment, and what a compaction would leave. */
export interface Segment {
  /** Each call's context count since the segment began, oldest first. */
  readonly windows: ReadonlyArray<number>
  /**
   * The latest summary's size in tokens, as the model wrote it (its facts block is pivot's, not the model's output),
   * else `DEFAULT_SUMMARY_TOKENS`.
   */
  readonly summary: number
  /**
   * The window a compaction leaves, which the next call writes anew: the first call's after the latest pivot
   * (measured), else the session's first call's plus a summary and the kept tail.
   */
  readonly base: number
  /**
   * Of `base`, the fixed prompt (system prompt and tools, `FixedPrompt`): the next call reads it from the cache (a
   * breakpoint after it), it does not write it anew. 0 when unknown.
   */
  readonly fixed?: number | undefined
}

/**
 * The segment of a window's messages (in order). `ttl`: the cache's time to live in ms; a call made more than `ttl`
 * after the previous call found the cache cold. `kept`: the tokens a compaction keeps verbatim (the tail budget).
 */
export const segmentOf = (
  messages: ReadonlyArray<Message>,
  options: { readonly ttl: number; readonly kept: number; readonly fixed?: number | undefined },
): Segment => {
  let summary: number | undefined
  let afterPivot: number | undefined
  let first: number | undefined
  let windows: Array<number> = []
  let previous: number | undefined
  for (const m of messages) {
    if (m.role !== "assistant") continue
    const at = m.createdAt
    const cold = previous !== undefined && at - previous > options.ttl
    previous = m.completedAt ?? at
    if (m.summary === true) {
      summary = estimate(strip(m.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n")))
      afterPivot = undefined
      windows = []
      continue
    }
    const tokens = contextCount(m.tokens)
    if (tokens <= 0) continue
    if (cold) windows = []
    windows.push(tokens)
    first ??= tokens
    if (summary !== undefined) afterPivot ??= tokens
  }
  const size = summary ?? DEFAULT_SUMMARY_TOKENS
  const base = afterPivot ?? (first ?? 0) + size + options.kept
  return options.fixed === undefined
    ? { windows, summary: size, base }
    : { windows, summary: size, base, fixed: options.fixed }
}

/** The rent paid so far: every call of the segment read what a compaction would have shed (over the base), at `read`. */
export const rent = (segment: Segment, rates: Multipliers): number => {
  let paid = 0
  for (const w of segment.windows) paid += Math.max(0, w - segment.base) * rates.read
  return paid
}

/**
 * What compacting now costs, in input-token equivalents: the summariser reads the latest window from the cache and
 * writes the summary (at the output rate), and the next call writes the base anew — but for its fixed prompt, which
 * it reads from the cache (ADR 0034).
 */
export const buy = (segment: Segment, rates: Multipliers): number => {
  const fixed = Math.min(segment.base, Math.max(0, segment.fixed ?? 0))
  return (
    (segment.windows.at(-1) ?? 0) * rates.read +
    segment.summary * rates.output +
    (segment.base - fixed) * rates.write +
    fixed * rates.read
  )
}

/** Whether compacting pays now: at least two calls in the segment, and the rent paid reaches the buy. */
export const due = (segment: Segment, rates: Multipliers): boolean =>
  segment.windows.length >= 2 && rent(segment, rates) >= buy(segment, rates)

/**
 * The two summariser requests a compaction can send, in tokens (ADR 0047). `cacheSafe`: the conversation's own prompt
 * (system prompt, the window as the last call sent it plus what came since, the compaction prompt), of which `cached`
 * tokens are the prefix the provider's cache still holds from the conversation's last call (0 on a cold cache).
 * `opencode`: OpenCode's request (its own system prompt, the head with tool outputs cut, the prompt), which shares no
 * prefix with the conversation, so none of it is read from the cache.
 */
export interface Requests {
  readonly cacheSafe: number
  readonly cached: number
  readonly opencode: number
}

/**
 * What each request's input costs, in input-token equivalents: what is cached is read at `read`, the rest is written
 * at `write` (Anthropic writes what the request's breakpoints cache; OpenAI bills it as plain input, `write` 1). The
 * summary's output is the same for both, so it is left out.
 */
export const requestCosts = (
  requests: Requests,
  rates: Multipliers,
): { readonly cacheSafe: number; readonly opencode: number } => {
  const cached = Math.min(requests.cacheSafe, Math.max(0, requests.cached))
  return {
    cacheSafe: cached * rates.read + (requests.cacheSafe - cached) * rates.write,
    opencode: requests.opencode * rates.write,
  }
}

/**
 * Whether the cache-safe request costs no more than OpenCode's (ADR 0047), the one home of the choice: its cached
 * prefix read at `read` and the rest written, against OpenCode's request written whole. In a large window whose last
 * call is cached it wins (the window is read at a tenth on Anthropic); in a small one whose tool outputs are large
 * and new — OpenCode's request cuts each to 2,000 characters — or on OpenAI's 0.5× reads, OpenCode's often wins.
 */
export const cacheSafePays = (requests: Requests, rates: Multipliers): boolean => {
  const costs = requestCosts(requests, rates)
  return costs.cacheSafe <= costs.opencode
}
