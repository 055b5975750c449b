/**
 * The settings each call of the context manager runs with: the strategy the options ask for, the compaction config
 * it shapes, and a session's overrides (`Options.session`), each checked against its model's limits.
 */
import { CacheAwareStrategy, type Config as CoreConfig, Ids, OpenCodeStrategy, type Strategy } from "@pivot/core"
import { Duration, Effect, Result, Schema } from "effect"
import type * as Compaction from "./Compaction.ts"
import { checkLimits, type ImpossibleLimits, type ModelSpec } from "./Config.ts"
import { InvalidSessionId, type Options, type SessionOverride } from "./ContextManagerTypes.ts"
import { cacheAwareOf } from "./internal/checkOptions.ts"

const validSessionId = Schema.is(Ids.SessionId)

/** The strategy `options` ask for: `strategy`, else cache-aware's with `cacheAware`'s settings, else OpenCode's. */
export const strategyOf = (options: Options): Strategy.Strategy => {
  if (options.strategy !== undefined) return options.strategy
  const cacheAware = cacheAwareOf(options)
  if (cacheAware === undefined) return OpenCodeStrategy.byConfig
  const { ttl, ...rest } = cacheAware
  return CacheAwareStrategy.make({
    ...rest,
    ...(ttl === undefined ? {} : { ttl: Duration.toMillis(Duration.fromInputUnsafe(ttl)) }),
  })
}

/** Fails with `ImpossibleLimits` when `spec`'s limits leave no room under `config`. */
export const checkSpec = (
  spec: ModelSpec,
  config: CoreConfig.CompactionConfig,
): Effect.Effect<void, ImpossibleLimits> => {
  const checked = checkLimits(spec.ref, spec.limits, config)
  return Result.isFailure(checked) ? Effect.fail(checked.failure) : Effect.void
}

/** The settings of every session, and of one. */
export interface SessionSettings {
  /** The compaction config: the strategy's settings over the application's. */
  readonly baseConfig: CoreConfig.CompactionConfig
  /** A session's settings: its overrides checked, else the shared settings (the same object on every call). */
  readonly settingsFor: (sessionId: string) => Effect.Effect<Compaction.Settings, InvalidSessionId | ImpossibleLimits>
}

/** The settings `options` and `strategy` give, the models checked against them (`ImpossibleLimits` if unusable). */
export const make = (options: Options, strategy: Strategy.Strategy): Effect.Effect<SessionSettings, ImpossibleLimits> =>
  Effect.gen(function* () {
    // The strategy's settings over the application's (cache-aware: an earlier threshold, no tail of old turns).
    const baseConfig: CoreConfig.CompactionConfig =
      strategy.configure === undefined ? (options.config ?? {}) : strategy.configure(options.config ?? {})
    yield* checkSpec(options.model, baseConfig)
    if (options.compactionModel !== undefined) yield* checkSpec(options.compactionModel, baseConfig)
    // Without overrides every call answers these same settings (the same object, so `prepare` can compare them).
    const aboveFixed = strategy.thresholdOf === "conversation"
    const baseSettings: Compaction.Settings = {
      model: options.model,
      compactionModel: options.compactionModel ?? options.model,
      config: baseConfig,
      ...(aboveFixed ? { aboveFixed } : {}),
    }
    const settingsFor = (
      sessionId: string,
    ): Effect.Effect<Compaction.Settings, InvalidSessionId | ImpossibleLimits> => {
      const override = options.session?.(sessionId)
      if (!validSessionId(sessionId)) return Effect.fail(new InvalidSessionId({ sessionId }))
      return override === undefined ? Effect.succeed(baseSettings) : overridden(override)
    }
    const overridden = (override: SessionOverride) =>
      Effect.gen(function* () {
        const config = override.config ?? baseConfig
        const model = override.model ?? options.model
        const compactionModel = override.compactionModel ?? options.compactionModel ?? model
        if (override.model !== undefined || override.config !== undefined) yield* checkSpec(model, config)
        if (override.compactionModel !== undefined) yield* checkSpec(compactionModel, config)
        return { model, compactionModel, config, ...(aboveFixed ? { aboveFixed } : {}) } satisfies Compaction.Settings
      })
    return { baseConfig, settingsFor }
  })
