/**
 * A provider's prompt cache, simulated: each request is a serialised prompt sent at a time, and the cache says what of
 * it is billed as uncached input, cache reads and cache writes, the way the two big providers describe their caches.
 * Pure: the state is a value, `bill` answers the next one. Tokens are the project's estimate (characters / 4), so
 * prefixes are exact in characters.
 *
 * - `anthropic` (one explicit breakpoint on the last message, as agents set it): a request reads the longest earlier
 *   request still cached that is an exact prefix of it; the rest is written (1.25× input, 5-minute TTL); a read
 *   refreshes that entry's TTL.
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
export const bill = (state: State, rules: Rules, text: string, at: number, ttl: number = TTL): [Billed, State] => {
  const live = state.entries.filter((e) => e.until >= at)
  const total = estimate(text)
  if (rules === "anthropic") {
    let best = -1
    live.forEach((e, i) => {
      if (text.startsWith(e.text) && (best === -1 || e.text.length > live[best]!.text.length)) best = i
    })
    const read = best === -1 ? 0 : estimate(live[best]!.text)
    const entries = live.map((e, i) => (i === best ? { text: e.text, until: at + ttl } : e))
    return [
      { input: 0, cacheRead: read, cacheWrite: total - read },
      { entries: [...entries, { text, until: at + ttl }] },
    ]
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
