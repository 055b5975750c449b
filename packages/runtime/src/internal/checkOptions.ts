/** `ContextManager.layer`'s options checked when the layer is built: one typed line for each bad one. */
import { Config as CoreConfig, type Facts, SchemaIssues, Tokens } from "@pivot/core"
import { Duration, Effect, Option, Result, Schema } from "effect"
import { PriceTable } from "../Config.ts"
import { type CacheAware, InvalidOption, InvalidToolKind, type Options } from "../ContextManagerTypes.ts"
import * as Hud from "../Hud.ts"

export const TOOL_KINDS: ReadonlyArray<string> = ["read", "edit", "command", "none"]

/** The options' `toolKinds`, checked: every value one of the kinds. */
export const checkToolKinds = (kinds: Facts.ToolKinds | undefined): Effect.Effect<void, InvalidToolKind> => {
  for (const [tool, kind] of Object.entries(kinds ?? {}))
    if (!TOOL_KINDS.includes(kind as string)) return Effect.fail(new InvalidToolKind({ tool, kind: String(kind) }))
  return Effect.void
}

/**
 * The durations and counts of the options, checked when the layer is built: read later (a `prepare`, a prune, a
 * summary's time box), a bad one would otherwise fail there as a defect.
 */
export const checkOptions = (options: Options): Effect.Effect<void, InvalidOption> => {
  // Checked by each command too, but only once the session was written to: a bad key would fail its first step.
  // A config the hand check is sure of needs no schema parser (a restart's first call would build it: ADR 0055).
  if (options.config !== undefined && !CoreConfig.surelyValid(options.config)) {
    const config = decodeConfig(options.config)
    if (Result.isFailure(config))
      return Effect.fail(
        new InvalidOption({
          option: "config",
          value: SchemaIssues.oneLine(config.failure),
          expected: "OpenCode's compaction keys in their ranges (Config.CompactionConfig)",
        }),
      )
  }
  if (options.strategy !== undefined && cacheAwareOf(options) !== undefined)
    return Effect.fail(
      new InvalidOption({
        option: "strategy",
        value: `${options.strategy.name} with cacheAware`,
        expected: "one of strategy or cacheAware (CacheAwareStrategy.make takes cacheAware's settings)",
      }),
    )
  const probes = typeof options.probes === "object" ? options.probes : undefined
  const durations = {
    summaryTimeout: options.summaryTimeout,
    "cacheAware.ttl": cacheAwareOf(options)?.ttl,
    "probes.timeout": probes?.timeout,
  }
  for (const [option, value] of Object.entries(durations))
    if (value !== undefined && Option.isNone(Duration.fromInput(value)))
      return Effect.fail(new InvalidOption({ option, value: String(value), expected: 'a duration ("5 minutes", ms)' }))
  const hud = typeof options.hud === "object" ? options.hud : undefined
  const counts = {
    maxConsecutiveCompactions: options.maxConsecutiveCompactions,
    overheadTokens: options.overheadTokens,
    warnAt: options.warnAt,
    "hud.high": hud?.high,
    "hud.critical": hud?.critical,
    "cacheAware.batch": cacheAwareOf(options)?.batch,
    "cacheAware.coldProtect": cacheAwareOf(options)?.coldProtect,
    "cacheAware.coldTurns": cacheAwareOf(options)?.coldTurns,
    "probes.maxOutputTokens": probes?.maxOutputTokens,
  }
  for (const [option, value] of Object.entries(counts))
    if (value !== undefined && !(Number.isFinite(value) && value >= 0))
      return Effect.fail(new InvalidOption({ option, value: String(value), expected: "a number of 0 or more" }))
  // A high level above the critical one would never show: the HUD would go from ok straight to critical.
  const high = hud?.high ?? Hud.DEFAULT_HIGH
  const critical = hud?.critical ?? Hud.DEFAULT_CRITICAL
  if (high > critical)
    return Effect.fail(
      new InvalidOption({ option: "hud.high", value: String(high), expected: `at most hud.critical (${critical})` }),
    )
  // A price under a key that is not `provider/model` would never be looked up: the cost line would bill without it.
  const cost = hud?.cost
  if (typeof cost === "object" && cost.prices !== undefined) {
    const decoded = decodePrices(cost.prices)
    if (Result.isFailure(decoded))
      return Effect.fail(
        new InvalidOption({
          option: "hud.cost.prices",
          value: decoded.failure.message.replace(/\s*\n\s*/g, " "),
          expected: '{ "provider/model": { input, output, cacheRead, cacheWrite } }',
        }),
      )
  }
  return Effect.void
}

export const decodePrices = Schema.decodeUnknownResult(PriceTable)
export const decodeConfig = Schema.decodeUnknownResult(CoreConfig.CompactionConfig)

/** The `cacheAware` option as settings, or undefined when it is off. */
export const cacheAwareOf = (options: Options): CacheAware | undefined =>
  options.cacheAware === undefined || options.cacheAware === false
    ? undefined
    : options.cacheAware === true
      ? {}
      : options.cacheAware

export const decodeUsage = Schema.decodeUnknownResult(Tokens.TokenUsage)
