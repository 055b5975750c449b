// The provider prompt cache the benches bill with: core's `PromptCache` (the one home of the simulation: Anthropic's
// exact-prefix reads at explicit breakpoints from 1,024 tokens, OpenAI's automatic 128-token steps from 1,024 tokens; a
// 5-minute TTL), kept here as a small stateful wrapper for the benches' loops.
import { PromptCache } from "@pivot/core"

export type Provider = PromptCache.Rules

/** What one request is billed. `input` is uncached input, not cached and not written. */
export type Billed = PromptCache.Billed

/** Price multipliers against the input price. */
export const RATES: Readonly<Record<Provider, { readonly read: number; readonly write: number }>> = {
  anthropic: { read: 0.1, write: 1.25 },
  openai: { read: 0.5, write: 1 },
}

/** The cache's time to live, in milliseconds. */
export const TTL = PromptCache.TTL
/** Anthropic caches no prefix shorter than this many tokens (core `PromptCache.ANTHROPIC_MIN`). */
export const ANTHROPIC_MIN = PromptCache.ANTHROPIC_MIN
/** OpenAI caches from this many prompt tokens on, in steps of `OPENAI_STEP`. */
export const OPENAI_MIN = PromptCache.OPENAI_MIN
export const OPENAI_STEP = PromptCache.OPENAI_STEP

/** A provider's cache: bill requests in time order. */
export class ProviderCache {
  private state: PromptCache.State = PromptCache.empty
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
  bill(text: string, at: number, breakpoints?: ReadonlyArray<number>): Billed {
    const [billed, next] = PromptCache.bill(this.state, this.provider, text, at, this.ttl, { breakpoints })
    this.state = next
    return billed
  }
}

/** Billed input in input-token equivalents at the provider's multipliers. */
export const equivalents = (billed: Billed, provider: Provider): number =>
  billed.input + billed.cacheRead * RATES[provider].read + billed.cacheWrite * RATES[provider].write
