/** Configuration: OpenCode's keys, the environment toggles, model limits from the catalog, and their errors. */
import { Config } from "@pivot/runtime"
import { ConfigProvider, Effect, Result } from "effect"
import { describe, expect, it } from "vitest"

const fromEnv = (env: Record<string, string>) => ConfigProvider.fromEnv({ env })
const parse = <A>(
  config: { readonly parse: (p: ConfigProvider.ConfigProvider) => Effect.Effect<A, unknown> },
  provider: ConfigProvider.ConfigProvider,
) => Effect.runPromise(Effect.result(config.parse(provider)))

describe("compaction settings", () => {
  it("given OpenCode's compaction keys in a config document, then they are read as written", async () => {
    const result = await parse(
      Config.compaction,
      ConfigProvider.fromUnknown({
        compaction: {
          auto: true,
          prune: true,
          reserved: 10_000,
          tail_turns: 3,
          preserve_recent_tokens: 4_000,
          threshold: 0.8,
        },
      }),
    )
    expect(result).toEqual(
      Result.succeed({
        auto: true,
        prune: true,
        reserved: 10_000,
        tail_turns: 3,
        preserve_recent_tokens: 4_000,
        threshold: 0.8,
      }),
    )
  })

  it("given no configuration, then the settings are empty (OpenCode's defaults apply)", async () => {
    expect(await parse(Config.compaction, fromEnv({}))).toEqual(Result.succeed({}))
  })

  it("given an impossible value (negative reserved), then a config error", async () => {
    const result = await parse(Config.compaction, ConfigProvider.fromUnknown({ compaction: { reserved: -1 } }))
    expect(Result.isFailure(result)).toBe(true)
  })

  for (const value of ["true", "TRUE", "1", "True"])
    it(`given PIVOT_DISABLE_AUTOCOMPACT=${value}, then auto is false even when the config says true`, async () => {
      const result = await parse(
        Config.compaction,
        ConfigProvider.orElse(
          fromEnv({ PIVOT_DISABLE_AUTOCOMPACT: value }),
          ConfigProvider.fromUnknown({ compaction: { auto: true } }),
        ),
      )
      expect(Result.isSuccess(result) && result.success.auto).toBe(false)
    })

  for (const value of ["false", "0", "yes", ""])
    it(`given PIVOT_DISABLE_AUTOCOMPACT=${JSON.stringify(value)}, then it is not truthy`, async () => {
      const result = await parse(Config.compaction, fromEnv({ PIVOT_DISABLE_AUTOCOMPACT: value }))
      expect(Result.isSuccess(result) && result.success.auto).toBeUndefined()
    })

  it("given PIVOT_DISABLE_PRUNE=1 with prune on, then prune is off; OpenCode's names work too", async () => {
    const pivot = await parse(
      Config.compaction,
      ConfigProvider.orElse(
        fromEnv({ PIVOT_DISABLE_PRUNE: "1" }),
        ConfigProvider.fromUnknown({ compaction: { prune: true } }),
      ),
    )
    expect(Result.isSuccess(pivot) && pivot.success.prune).toBe(false)
    const opencode = await parse(
      Config.compaction,
      fromEnv({ OPENCODE_DISABLE_AUTOCOMPACT: "true", OPENCODE_DISABLE_PRUNE: "true" }),
    )
    expect(Result.isSuccess(opencode) && [opencode.success.auto, opencode.success.prune]).toEqual([false, false])
  })

  for (const [value, expected] of [
    ["8000", 8_000],
    ["0", undefined],
    ["-5", undefined],
    ["12.5", undefined],
    ["lots", undefined],
  ] as const)
    it(`given PIVOT_OUTPUT_TOKEN_MAX=${value}, then the output cap is ${expected ?? "ignored"}`, async () => {
      const result = await parse(Config.compaction, fromEnv({ PIVOT_OUTPUT_TOKEN_MAX: value }))
      expect(Result.isSuccess(result) && result.success.output_token_max).toBe(expected)
    })

  it("given PIVOT_COMPACTION_THRESHOLD=0.7, then the ratio threshold is 0.7; 1.5 is a config error", async () => {
    const ok = await parse(Config.compaction, fromEnv({ PIVOT_COMPACTION_THRESHOLD: "0.7" }))
    expect(Result.isSuccess(ok) && ok.success.threshold).toBe(0.7)
    const bad = await parse(Config.compaction, fromEnv({ PIVOT_COMPACTION_THRESHOLD: "1.5" }))
    expect(Result.isFailure(bad)).toBe(true)
  })
})

describe("models", () => {
  it("given model and agent.compaction.model as provider/model, then both refs are read", async () => {
    const result = await parse(
      Config.settings,
      ConfigProvider.fromUnknown({
        model: "anthropic/claude-sonnet-4-5",
        agent: { compaction: { model: "openai/gpt-4o-mini" } },
      }),
    )
    expect(Result.isSuccess(result) && [result.success.model, result.success.compactionModel]).toEqual([
      { providerId: "anthropic", modelId: "claude-sonnet-4-5" },
      { providerId: "openai", modelId: "gpt-4o-mini" },
    ])
  })

  it("given a model name without a provider, then a config error", async () => {
    expect(Result.isFailure(await parse(Config.settings, ConfigProvider.fromUnknown({ model: "gpt-4o" })))).toBe(true)
    expect(Result.isFailure(Config.parseModelRef("gpt-4o"))).toBe(true)
    expect(Config.parseModelRef("openrouter/anthropic/claude")).toEqual(
      Result.succeed({ providerId: "openrouter", modelId: "anthropic/claude" }),
    )
  })

  it("given a model in the models.dev catalog, then its limits come from it", () => {
    expect(Config.catalogLimits({ providerId: "openai", modelId: "gpt-4o" })).toEqual({
      context: 128_000,
      output: 16_384,
    })
  })

  it("given an undated id, then the newest dated release is found", () => {
    expect(Config.catalogLimits({ providerId: "anthropic", modelId: "claude-opus-4-1" })?.context).toBe(200_000)
  })

  it("given a model the snapshot lacks, then the supplement answers (with limit.input where models.dev has it)", () => {
    expect(Config.catalogLimits({ providerId: "openai", modelId: "gpt-5" })).toEqual({
      context: 400_000,
      input: 272_000,
      output: 128_000,
    })
  })

  it("given an unknown model, then UnknownModel; an override makes it known", () => {
    const ref = { providerId: "acme", modelId: "rocket-1" }
    const unknown = Config.resolveModel(ref)
    expect(Result.isFailure(unknown) && unknown.failure._tag).toBe("UnknownModel")
    expect(Result.isFailure(unknown) && unknown.failure.message).toContain("acme/rocket-1")
    expect(Config.resolveModel(ref, { override: { context: 50_000, output: 4_000 } })).toEqual(
      Result.succeed({ ref, limits: { context: 50_000, output: 4_000 } }),
    )
  })

  for (const [limits, reason] of [
    [{ context: 8_000, output: 16_000 }, "exceeds context"],
    [{ context: 100_000, input: 200_000, output: 4_000 }, "input 200000 exceeds"],
    [{ context: 16_384, output: 0 }, "no usable window"],
    [{ context: 1.5, output: 1 }, "non-negative integers"],
  ] as const)
    it(`given limits ${JSON.stringify(limits)}, then ImpossibleLimits (${reason})`, () => {
      const result = Config.resolveModel({ providerId: "p", modelId: "m" }, { override: limits })
      expect(Result.isFailure(result) && result.failure._tag).toBe("ImpossibleLimits")
      expect(Result.isFailure(result) && result.failure.message).toContain(reason)
    })

  it("given context 0 (unknown), then the limits are accepted and automatic compaction simply never triggers", () => {
    expect(Result.isSuccess(Config.checkLimits({ providerId: "p", modelId: "m" }, { context: 0, output: 0 }))).toBe(
      true,
    )
  })
})

describe("Config.redactOnRecord", () => {
  for (const [value, expected] of [
    [undefined, false],
    ["1", true],
    ["TRUE", true],
    ["0", false],
    ["yes", false],
  ] as const)
    it(`given PIVOT_REDACT_ON_RECORD=${JSON.stringify(value)}, then record-time redaction is ${expected ? "on" : "off"}`, async () => {
      const env: Record<string, string> = value === undefined ? {} : { PIVOT_REDACT_ON_RECORD: value }
      expect(await parse(Config.redactOnRecord, fromEnv(env))).toEqual(Result.succeed(expected))
    })
})

describe("prices", () => {
  const sonnet = { providerId: "anthropic", modelId: "claude-sonnet-4-5" }
  it("given a well-known model, then its default price has Anthropic's cache multipliers", () => {
    const price = Config.priceOf(sonnet)!
    expect(price).toEqual({ input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 })
  })

  it("given a catalog model with no cache-write price, then a write costs what input costs (OpenAI)", () => {
    const price = Config.priceOf({ providerId: "openai", modelId: "gpt-4.1" })!
    expect(price.input).toBeGreaterThan(0)
    expect(price.cacheWrite).toBe(price.input)
    expect(price.cacheRead).toBeLessThan(price.input)
  })

  it("given a dated catalog release, then an id without the date finds its price", () => {
    const price = Config.priceOf({ providerId: "anthropic", modelId: "claude-3-5-haiku" })
    expect(price).toMatchObject({ input: 0.8, cacheWrite: 1 })
  })

  it("given an override, then it wins; an unknown model has no price", async () => {
    const mine = { input: 1, output: 2, cacheRead: 0.5, cacheWrite: 1 }
    const overrides = await parse(
      Config.prices,
      ConfigProvider.fromUnknown({ prices: { "anthropic/claude-sonnet-4-5": mine } }),
    )
    expect(overrides).toEqual(Result.succeed({ "anthropic/claude-sonnet-4-5": mine }))
    expect(Config.priceOf(sonnet, Result.getOrThrow(overrides))).toEqual(mine)
    expect(Config.priceOf({ providerId: "nobody", modelId: "nothing" })).toBeUndefined()
  })

  it("given a negative price, then the config is refused", async () => {
    const result = await parse(
      Config.prices,
      ConfigProvider.fromUnknown({ prices: { "a/b": { input: -1, output: 0, cacheRead: 0, cacheWrite: 0 } } }),
    )
    expect(Result.isFailure(result)).toBe(true)
  })

  it("given a key that is not provider/model, then the config is refused naming it, not the key skipped", async () => {
    const price = { input: 1, output: 2, cacheRead: 0.5, cacheWrite: 1 }
    const result = await parse(
      Config.prices,
      ConfigProvider.fromUnknown({ prices: { "claude-sonnet-4-5": price, "anthropic/claude-sonnet-4-5": price } }),
    )
    expect(Result.isFailure(result)).toBe(true)
    expect(String(Result.isFailure(result) ? result.failure : "")).toContain(
      'key "claude-sonnet-4-5" is not provider/model',
    )
  })
})
