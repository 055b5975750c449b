// A simulated provider prompt cache for bench:cost: every request is a serialised prompt with a time; the cache bills
// it as uncached input, cache reads and cache writes, the way the two big providers describe their caches.
//
// - Anthropic (explicit breakpoints; by default one on the last message, as agents set it): each breakpoint of a
//   request caches the prompt up to it, if that prefix is at least `ANTHROPIC_MIN` tokens; a request reads the longest
//   cached prefix of an earlier request (up to one of its breakpoints) that is an exact prefix of it, up to its own
//   last breakpoint; from there to its last cacheable breakpoint is written (1.25× input, 5-minute TTL); what follows
//   is uncached input. A read refreshes the entry's TTL. (Anthropic looks back at most 20 content blocks from each
//   breakpoint for a hit: not modelled, every earlier breakpoint is found.)
// - OpenAI (automatic): a request reads the longest common prefix with any cached request, counted in 128-token
//   steps and only from 1,024 tokens on; nothing is billed for writing (a write costs what input costs); 5-minute TTL.
//
// Tokens are the project's estimate (characters / 4) of the serialised prompt, so prefixes are exact in characters.
import { Tokens } from "@pivot/core"

export type Provider = "anthropic" | "openai"

/** What one request is billed. `input` is uncached input, not cached and not written. */
export interface Billed {
  readonly input: number
  readonly cacheRead: number
  readonly cacheWrite: number
}

/** Price multipliers against the input price. */
export const RATES: Readonly<Record<Provider, { readonly read: number; readonly write: number }>> = {
  anthropic: { read: 0.1, write: 1.25 },
  openai: { read: 0.5, write: 1 },
}

/** The cache's time to live, in milliseconds. */
export const TTL = 5 * 60_000
/** Anthropic caches no prefix shorter than this many tokens (Claude Sonnet and Opus up to 4.1; Haiku 3.5: 2,048). */
export const ANTHROPIC_MIN = 1_024
/** OpenAI caches from this many prompt tokens on, in steps of `OPENAI_STEP`. */
export const OPENAI_MIN = 1_024
export const OPENAI_STEP = 128

const shared = (a: string, b: string): number => {
  const n = Math.min(a.length, b.length)
  let i = 0
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++
  return i
}

/** A provider's cache: bill requests in time order. */
export class ProviderCache {
  private entries: Array<{ text: string; until: number }> = []
  readonly provider: Provider
  readonly ttl: number
  constructor(provider: Provider, ttl: number = TTL) {
    this.provider = provider
    this.ttl = ttl
  }

  /**
   * Bills the request `text` sent at `at` (ms). `breakpoints`: the character offsets in `text` where the request puts
   * Anthropic cache breakpoints, ascending (default: one at the end); OpenAI's automatic cache ignores them.
   */
  bill(text: string, at: number, breakpoints: ReadonlyArray<number> = [text.length]): Billed {
    this.entries = this.entries.filter((e) => e.until >= at)
    const total = Tokens.estimate(text)
    let read = 0
    if (this.provider === "anthropic") {
      const last = breakpoints.at(-1) ?? 0
      let best: { text: string; until: number } | undefined
      for (const e of this.entries)
        if (
          e.text.length <= last &&
          text.startsWith(e.text) &&
          (best === undefined || e.text.length > best.text.length)
        )
          best = e
      if (best !== undefined) {
        read = Tokens.estimate(best.text)
        best.until = at + this.ttl
      }
      let cached = 0
      for (const offset of breakpoints) {
        const prefix = text.slice(0, offset)
        if (Tokens.estimate(prefix) < ANTHROPIC_MIN) continue
        cached = Math.max(cached, Tokens.estimate(prefix))
        const known = this.entries.find((e) => e.text === prefix)
        if (known === undefined) this.entries.push({ text: prefix, until: at + this.ttl })
        else known.until = at + this.ttl
      }
      const write = Math.max(0, cached - read)
      return { input: total - read - write, cacheRead: read, cacheWrite: write }
    }
    let longest = 0
    let source: { text: string; until: number } | undefined
    for (const e of this.entries) {
      const n = shared(text, e.text)
      if (n > longest) {
        longest = n
        source = e
      }
    }
    const tokens = Tokens.estimate(text.slice(0, longest))
    if (tokens >= OPENAI_MIN) {
      read = Math.floor(tokens / OPENAI_STEP) * OPENAI_STEP
      if (source !== undefined) source.until = at + this.ttl
    }
    this.entries.push({ text, until: at + this.ttl })
    return { input: total - read, cacheRead: read, cacheWrite: 0 }
  }
}

/** Billed input in input-token equivalents at the provider's multipliers. */
export const equivalents = (billed: Billed, provider: Provider): number =>
  billed.input + billed.cacheRead * RATES[provider].read + billed.cacheWrite * RATES[provider].write
