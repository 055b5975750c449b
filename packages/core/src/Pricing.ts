/**
 * What a model call is billed: a price per provider and model (USD per million tokens, cache reads and writes priced
 * apart), the multipliers it implies against the input price, and a call's cost in input-token equivalents and in
 * dollars. Pure: the runtime looks prices up (catalog, defaults, the user's overrides); the ledger only multiplies.
 */
import * as Schema from "effect/Schema"
import type { ModelRef } from "./Model.ts"
import type { TokenUsage } from "./Tokens.ts"

const Rate = Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))

/** A model's price in USD per million tokens. */
export const Price = Schema.Struct({
  input: Rate,
  output: Rate,
  cacheRead: Rate,
  cacheWrite: Rate,
}).annotate({ identifier: "Price" })
export type Price = typeof Price.Type

/** Prices relative to the input price: what one token of each kind costs in input tokens. */
export interface Rates {
  readonly read: number
  readonly write: number
  readonly output: number
  /** Whether the rates come from a price (false: the provider's default multipliers, or none known). */
  readonly priced: boolean
}

/**
 * Multipliers by provider when no price is known: Anthropic bills a 5-minute cache write at 1.25× the input price and
 * a read at 0.1×; OpenAI caches automatically (a write costs what input costs) and bills a read at 0.5× (GPT-4o; the
 * GPT-5 family bills 0.1×, which its catalog price gives). Output is priced at its usual ratio to input.
 */
export const PROVIDER_RATES: Readonly<Record<string, Rates>> = {
  anthropic: { read: 0.1, write: 1.25, output: 5, priced: false },
  openai: { read: 0.5, write: 1, output: 4, priced: false },
}

/** Rates of a provider with no known cache pricing: every token costs an input token. */
export const FLAT: Rates = { read: 1, write: 1, output: 1, priced: false }

/** The multipliers a price implies; undefined when the input is free (nothing to divide by). */
export const ratesOf = (price: Price): Rates | undefined =>
  price.input > 0
    ? {
        read: price.cacheRead / price.input,
        write: price.cacheWrite / price.input,
        output: price.output / price.input,
        priced: true,
      }
    : undefined

/** The rates for a model: its price's, else its provider's defaults, else flat. */
export const ratesFor = (ref: ModelRef | undefined, price: Price | undefined): Rates =>
  (price === undefined ? undefined : ratesOf(price)) ??
  (ref !== undefined && Object.hasOwn(PROVIDER_RATES, ref.providerId) ? PROVIDER_RATES[ref.providerId]! : FLAT)

/** Input tokens as billed, in input-token equivalents: uncached input, plus cache reads and writes at their rates. */
export const inputEquivalent = (usage: TokenUsage, rates: Rates): number =>
  usage.input + usage.cacheRead * rates.read + usage.cacheWrite * rates.write

/** The whole call (output and reasoning at the output rate) in input-token equivalents. */
export const equivalent = (usage: TokenUsage, rates: Rates): number =>
  inputEquivalent(usage, rates) + (usage.output + usage.reasoning) * rates.output

/** The call's cost in USD. */
export const dollars = (usage: TokenUsage, price: Price): number =>
  (usage.input * price.input +
    usage.cacheRead * price.cacheRead +
    usage.cacheWrite * price.cacheWrite +
    (usage.output + usage.reasoning) * price.output) /
  1_000_000

/** The share of the call's input the provider served from its cache (0 when it reported no input). */
export const hitRatio = (usage: TokenUsage): number => {
  const all = usage.input + usage.cacheRead + usage.cacheWrite
  return all === 0 ? 0 : usage.cacheRead / all
}
