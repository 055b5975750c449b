/**
 * A model's price as OpenCode names it: its `cost` (USD per million tokens; `cache.read`, `cache.write`), from
 * models.dev for the providers it knows and from opencode.json for a model the user declares
 * (`provider.<id>.models.<id>.cost`: `input`, `output`, `cache_read`, `cache_write`). pivot prices rent-or-buy with it
 * (`Config.ModelSpec.price`) before its own defaults and catalog, so a custom provider's model is priced as the user
 * said. OpenCode gives a model without a declared cost 0 everywhere: that is no price (nothing to divide by).
 */
import type { Pricing } from "@pivot/core"

/** `cost` as OpenCode's model carries it (the fields read here). */
export interface Cost {
  readonly input?: number | undefined
  readonly output?: number | undefined
  readonly cache?: { readonly read?: number | undefined; readonly write?: number | undefined } | undefined
}

const rate = (n: number | undefined): number | undefined =>
  typeof n === "number" && Number.isFinite(n) && n >= 0 ? n : undefined

/**
 * The price `cost` names; undefined when it has no positive input price (OpenCode's 0 for a model declared without
 * one) or a rate that is not a finite number ≥ 0. A missing cache price is billed as input (no discount known).
 */
export const priceOf = (cost: Cost | undefined): Pricing.Price | undefined => {
  const input = rate(cost?.input)
  if (input === undefined || input <= 0) return undefined
  const output = rate(cost?.output ?? 0)
  const cacheRead = rate(cost?.cache?.read ?? input)
  const cacheWrite = rate(cost?.cache?.write ?? input)
  if (output === undefined || cacheRead === undefined || cacheWrite === undefined) return undefined
  // OpenCode fills a missing cache price with 0: a read or write at 0 USD is no price either, but as input.
  return {
    input,
    output,
    cacheRead: cacheRead === 0 ? input : cacheRead,
    cacheWrite: cacheWrite === 0 ? input : cacheWrite,
  }
}

/** `{ price }` for a model spec when `cost` names one, else nothing (the spec is priced by pivot's catalog). */
export const spec = (cost: Cost | undefined): { readonly price?: Pricing.Price } => {
  const price = priceOf(cost)
  return price === undefined ? {} : { price }
}
