/**
 * A provider's prompt cache, simulated: each request is a serialised prompt sent at a time, and the cache says what of
 * it is billed as uncached input, cache reads and cache writes, the way the two big providers describe their caches.
 * Pure: the state is a value, `bill` answers the next one. Tokens are the project's estimate (characters / 4), so
 * prefixes are exact in characters.
 *
 * - `anthropic` (explicit breakpoints; by default one on the last message, as agents set it): each breakpoint of a
 *   request caches the prompt up to it when that prefix is at least `minimum` tokens (`ANTHROPIC_MIN` by default); a
 *   request reads the longest cached prefix (up to an earlier request's breakpoint) that is an exact prefix of it, up
 *   to its own last breakpoint; from there to its last cacheable breakpoint is written (1.25× input, 5-minute TTL);
 *   what follows is uncached input. A read refreshes the entry's TTL. (Anthropic looks back at most 20 content blocks
 *   from a breakpoint for a hit: not modelled, every earlier breakpoint is found.)
 * - `openai` (automatic): a request reads its longest common prefix with any cached request, counted in steps of 128
 *   tokens and only from 1,024 tokens on; nothing is billed for writing (a write costs what input costs).
 */
import { estimate } from "./Tokens.ts"

/** Whose cache rules apply. */
export type Rules = "anthropic" | "openai"

/** The rules, in the order reports list them. */
export const RULES: ReadonlyArray<Rules> = ["anthropic", "openai"]

/** What one request is billed, in tokens. `input` is uncached input: neither read nor written. */
export interface Billed {
  readonly input: number
  readonly cacheRead: number
  readonly cacheWrite: number
}

/** A cached prompt and when it expires (ms). */
export interface Entry {
  readonly text: string
  readonly until: number
}

/** The cache: the prompts it holds. */
export interface State {
  readonly entries: ReadonlyArray<Entry>
}

/** An empty cache. */
export const empty: State = { entries: [] }

/** The cache's default time to live: 5 minutes, in ms. */
export const TTL = 5 * 60_000

/** Anthropic caches no prefix shorter than this many tokens (Claude Sonnet and Opus; Haiku: 2,048). */
export const ANTHROPIC_MIN = 1_024

/** Where a request puts Anthropic's breakpoints, and the shortest prefix the provider caches. */
export interface Options {
  /** Character offsets in the request, ascending; default one at its end. OpenAI's automatic cache ignores them. */
  readonly breakpoints?: ReadonlyArray<number> | undefined
  /** Anthropic's minimum cacheable prefix in tokens; default `ANTHROPIC_MIN`. */
  readonly minimum?: number | undefined
}

/** OpenAI caches from this many prompt tokens on, in steps of `OPENAI_STEP`. */
export const OPENAI_MIN = 1_024
export const OPENAI_STEP = 128

const shared = (a: string, b: string): number => {
  const n = Math.min(a.length, b.length)
  let i = 0
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++
  return i
}

/**
 * Bills `text` sent at `at` (ms) against the cache; answers what it was billed and the cache after it. An entry lives
 * until `at + ttl` inclusive: a request exactly `ttl` after the last one that touched it still reads it.
 */
export const bill = (
  state: State,
  rules: Rules,
  text: string,
  at: number,
  ttl: number = TTL,
  options: Options = {},
): [Billed, State] => {
  const live = state.entries.filter((e) => e.until >= at)
  const total = estimate(text)
  if (rules === "anthropic") {
    const breakpoints = options.breakpoints ?? [text.length]
    const minimum = options.minimum ?? ANTHROPIC_MIN
    const last = breakpoints.at(-1) ?? 0
    let best = -1
    live.forEach((e, i) => {
      if (e.text.length <= last && text.startsWith(e.text) && (best === -1 || e.text.length > live[best]!.text.length))
        best = i
    })
    const read = best === -1 ? 0 : estimate(live[best]!.text)
    const entries = live.map((e, i) => (i === best ? { text: e.text, until: at + ttl } : e))
    let cached = 0
    for (const offset of breakpoints) {
      const prefix = text.slice(0, offset)
      const tokens = estimate(prefix)
      if (tokens < minimum) continue
      cached = Math.max(cached, tokens)
      const known = entries.findIndex((e) => e.text === prefix)
      if (known === -1) entries.push({ text: prefix, until: at + ttl })
      else entries[known] = { text: prefix, until: at + ttl }
    }
    const write = Math.max(0, cached - read)
    return [{ input: total - read - write, cacheRead: read, cacheWrite: write }, { entries }]
  }
  let longest = 0
  let source = -1
  live.forEach((e, i) => {
    const n = shared(text, e.text)
    if (n > longest) {
      longest = n
      source = i
    }
  })
  const tokens = estimate(text.slice(0, longest))
  const read = tokens >= OPENAI_MIN ? Math.floor(tokens / OPENAI_STEP) * OPENAI_STEP : 0
  const entries = live.map((e, i) => (read > 0 && i === source ? { text: e.text, until: at + ttl } : e))
  return [{ input: total - read, cacheRead: read, cacheWrite: 0 }, { entries: [...entries, { text, until: at + ttl }] }]
}
