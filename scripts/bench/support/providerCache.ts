// A simulated provider prompt cache for bench:cost: every request is a serialised prompt with a time; the cache bills
// it as uncached input, cache reads and cache writes, the way the two big providers describe their caches.
//
// - Anthropic (explicit breakpoint on the last message, as agents set it): a request reads the longest earlier
//   request still cached that is an exact prefix of it; the rest is written to the cache (1.25× input, 5-minute TTL);
//   a read refreshes the entry's TTL.
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

  bill(text: string, at: number): Billed {
    this.entries = this.entries.filter((e) => e.until >= at)
    const total = Tokens.estimate(text)
    let read = 0
    if (this.provider === "anthropic") {
      let best: { text: string; until: number } | undefined
      for (const e of this.entries)
        if (text.startsWith(e.text) && (best === undefined || e.text.length > best.text.length)) best = e
      if (best !== undefined) {
        read = Tokens.estimate(best.text)
        best.until = at + this.ttl
      }
      this.entries.push({ text, until: at + this.ttl })
      return { input: 0, cacheRead: read, cacheWrite: total - read }
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
