/**
 * The usage HUD: a short status block pivot adds to the model's system prompt on every step (opt-in), so the model
 * sees how full its context is and can compact before it overflows (OpenCode users get this from the open-memory
 * plugin). The text is a pure function of the numbers: the same state always gives the same bytes, and its first line
 * never changes, so a prompt cache loses no more than the changing numbers force. An optional cost line (`cost`)
 * adds what the session has spent, the last compaction's net saving and the cache hit ratio, from the ledger.
 */
import { Ledger, type Pricing, Text } from "@pivot/core"

/** The share of the usable window at which the level turns `high`, then `critical`. */
export interface Levels {
  /** Default 0.7. */
  readonly high?: number | undefined
  /** Default 0.9. */
  readonly critical?: number | undefined
}

/** Options of the HUD (`ContextManager` option `hud`). */
export interface Options extends Levels {
  /** Whether pruned outputs can be read back (`context_recall`); the HUD says so. Default false. */
  readonly recall?: boolean | undefined
  /**
   * The cost line (opt-in, default off): the session's spend so far, the last compaction's net saving and the cache
   * hit ratio, from the ledger (docs/ledger.md). `prices` overrides the price table (`provider/model` keys, USD per
   * million tokens), as the `prices` config key does. Its numbers change with every call, and the HUD with them.
   */
  readonly cost?: boolean | { readonly prices?: Readonly<Record<string, Pricing.Price>> | undefined } | undefined
}

/** The HUD's level. */
export type Level = "ok" | "high" | "critical"

/** The default ratios. */
export const DEFAULT_HIGH = 0.7
export const DEFAULT_CRITICAL = 0.9

/** The first line of every HUD: the part of the block a prompt cache can always keep. */
export const HEADER = "[pivot context status]"

/**
 * The level of `tokens` in a usable window of `usable` tokens: `critical` from `critical × usable` tokens on, `high`
 * from `high × usable` on, else `ok`. A window of 0 usable tokens is always `critical`.
 */
export const level = (tokens: number, usable: number, levels: Levels = {}): Level => {
  const high = levels.high ?? DEFAULT_HIGH
  const critical = levels.critical ?? DEFAULT_CRITICAL
  if (usable <= 0) return "critical"
  if (tokens >= critical * usable) return "critical"
  if (tokens >= high * usable) return "high"
  return "ok"
}

/** What the cost line shows (`costOf` reads it from the ledger). */
export interface Cost {
  /** Every model call so far (summary calls included), in input-token equivalents at each model's rates. */
  readonly spent: number
  /** The same in USD, when every call's model has a price. */
  readonly dollars?: number | undefined
  /** The newest compaction's net saving so far, in input-token equivalents; undefined before the first. */
  readonly lastNet?: number | undefined
  /** Cache reads over all input tokens reported (0 to 1). */
  readonly hitRatio: number
}

/** What the HUD shows. */
export interface Input {
  readonly tokens: number
  readonly usable: number
  readonly pivots: number
  readonly prunedParts: number
  readonly prunedTokens: number
  /** The cost line's numbers; no line without them. */
  readonly cost?: Cost | undefined
  /** Pinned messages and the tokens they take (`Pins`); no line when none is pinned. */
  readonly pinned?: { readonly messages: number; readonly tokens: number } | undefined
}

/** The cost line's numbers from a settled ledger: its totals and its newest compaction. */
export const costOf = (ledger: Ledger.State): Cost => {
  const totals = Ledger.totals(ledger)
  const last = Ledger.entries(ledger).findLast((e) => e.kind === "compaction")
  return {
    spent: totals.cost,
    ...(totals.calls > 0 && totals.unpriced === 0 ? { dollars: totals.dollars } : {}),
    ...(last === undefined ? {} : { lastNet: last.net }),
    hitRatio: totals.hitRatio,
  }
}

const grouped = (n: number): string => Text.thousands(Math.max(0, n))
const signed = (n: number): string => (Math.round(n) < 0 ? `-${grouped(-n)}` : grouped(n))

/** The cost line: at most about 30 tokens for any numbers. */
const costLine = (cost: Cost): string => {
  const dollars = cost.dollars === undefined ? "" : ` ($${Math.max(0, cost.dollars).toFixed(2)})`
  const last =
    cost.lastNet === undefined ? "no compaction yet" : `last compaction net saving ${signed(cost.lastNet)} eq`
  const hit = Math.min(100, Math.max(0, Math.floor(cost.hitRatio * 100)))
  return `cost: ${grouped(cost.spent)} input-token eq so far${dollars}; ${last}; cache hit ${hit}%`
}

/**
 * The HUD text: at most six short lines (well under 150 tokens for any numbers). The cost line comes last: it changes
 * on every call, so the lines before it stay a stable prefix as long as they can.
 */
export const render = (input: Input, options: Options = {}): string => {
  const lvl = level(input.tokens, input.usable, options)
  const percent = input.usable > 0 ? Math.min(999, Math.floor((input.tokens / input.usable) * 100)) : 100
  const pruned =
    input.prunedParts === 0
      ? "pruned: none"
      : `pruned: ${grouped(input.prunedParts)} old tool outputs (${grouped(input.prunedTokens)} tokens)${
          options.recall === true ? ", recallable with context_recall" : ""
        }`
  const lines = [
    HEADER,
    `context: ${grouped(input.tokens)} / ${grouped(input.usable)} tokens (${percent}%), level ${lvl}`,
    `pivots so far: ${grouped(input.pivots)}; ${pruned}`,
  ]
  if (input.pinned !== undefined && input.pinned.messages > 0)
    lines.push(
      `pinned: ${grouped(input.pinned.messages)} message${input.pinned.messages === 1 ? "" : "s"} (${grouped(input.pinned.tokens)} tokens), kept verbatim after every pivot`,
    )
  if (lvl !== "ok")
    lines.push(
      lvl === "critical"
        ? "advice: the context is nearly full; call context_compact now (a focus note says what to keep)"
        : "advice: the context is filling up; call context_compact at a good stopping point",
    )
  if (input.cost !== undefined) lines.push(costLine(input.cost))
  return lines.join("\n")
}
