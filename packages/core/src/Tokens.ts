/**
 * Token counts: provider usage normalised the way OpenCode does (spec §2.1) and the chars/4 estimate (§2.2).
 */
import * as Schema from "effect/Schema"

const Count = Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))

/** Normalised token usage of one model call. `input` excludes cached tokens; `output` excludes reasoning. */
export const TokenUsage = Schema.Struct({
  input: Count,
  output: Count,
  reasoning: Count,
  cacheRead: Count,
  cacheWrite: Count,
  total: Schema.optionalKey(Count),
}).annotate({ identifier: "TokenUsage" })
export type TokenUsage = typeof TokenUsage.Type

/** Usage of a call that cost nothing (a user message, a not-yet-run summary). */
export const zero: TokenUsage = { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 }

/** Provider usage as the AI SDK reports it, plus the provider metadata OpenCode reads cache writes from. */
export interface ProviderUsage {
  readonly inputTokens?: number | undefined
  readonly outputTokens?: number | undefined
  readonly totalTokens?: number | undefined
  readonly reasoningTokens?: number | undefined
  readonly cachedInputTokens?: number | undefined
  readonly cacheReadInputTokens?: number | undefined
  readonly cacheWriteInputTokens?: number | undefined
}

/** Provider metadata keyed by provider, as the AI SDK passes it. */
export type ProviderMetadata = Readonly<Record<string, unknown>>

const safe = (x: unknown): number => (typeof x === "number" && Number.isFinite(x) ? Math.max(0, x) : 0)

const path = (root: unknown, keys: ReadonlyArray<string>): unknown => {
  let at = root
  for (const key of keys) {
    if (typeof at !== "object" || at === null) return undefined
    at = (at as Record<string, unknown>)[key]
  }
  return at
}

const CACHE_WRITE_SOURCES: ReadonlyArray<ReadonlyArray<string>> = [
  ["anthropic", "cacheCreationInputTokens"],
  ["vertex", "cacheCreationInputTokens"],
  ["bedrock", "usage", "cacheWriteInputTokens"],
  ["venice", "usage", "cacheCreationInputTokens"],
]

/** Normalises provider usage (spec §2.1): cached tokens out of `input`, reasoning out of `output`, `total` as given. */
export const fromProvider = (usage: ProviderUsage, metadata?: ProviderMetadata): TokenUsage => {
  const cacheRead = safe(usage.cacheReadInputTokens ?? usage.cachedInputTokens)
  let cacheWrite = 0
  if (usage.cacheWriteInputTokens !== undefined) cacheWrite = safe(usage.cacheWriteInputTokens)
  else {
    for (const source of CACHE_WRITE_SOURCES) {
      const value = path(metadata, source)
      if (value !== undefined && value !== null) {
        cacheWrite = safe(value)
        break
      }
    }
  }
  const reasoning = safe(usage.reasoningTokens)
  const normalised: TokenUsage = {
    input: safe(safe(usage.inputTokens) - cacheRead - cacheWrite),
    output: safe(safe(usage.outputTokens) - reasoning),
    reasoning,
    cacheRead,
    cacheWrite,
  }
  return usage.totalTokens === undefined ? normalised : { ...normalised, total: usage.totalTokens }
}

/** The context a call used (spec §2.4): `total` when non-zero, else input + output + cache (reasoning left out). */
export const contextCount = (usage: TokenUsage): number =>
  usage.total || usage.input + usage.output + usage.cacheRead + usage.cacheWrite

/** OpenCode's only estimator (spec §2.2): UTF-16 length / 4, rounded. */
export const estimate = (text: string): number => estimateLength(text.length)

/** The estimate of a text of `length` UTF-16 code units, without the text (a prefix's length, say). */
export const estimateLength = (length: number): number => Math.max(0, Math.round(length / 4))

/**
 * The estimate of a window sent as a JSON array of `messages` model messages whose JSON is `jsonLength` long: that
 * length's estimate, but an empty window is 0 tokens (its JSON `[]` would round to 1). `estimate` itself stays as
 * OpenCode's (spec §2.2); this is pivot's reading of a window's size, for what it prints and reports.
 */
export const estimateWindowLength = (messages: number, jsonLength: number): number =>
  messages === 0 ? 0 : estimateLength(jsonLength)

/**
 * The estimate of a window of model messages (the JSON of the array): 0 for an empty window.
 *
 * **Example**
 * ```ts
 * Tokens.estimateWindow([]) // 0, not Tokens.estimate("[]") = 1
 * ```
 */
export const estimateWindow = (messages: ReadonlyArray<unknown>): number =>
  estimateWindowLength(messages.length, JSON.stringify(messages).length)
