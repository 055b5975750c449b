/**
 * pivot in one call, for AI SDK users who do not use Effect: `createPivot({ model, store })` opens (or creates) a
 * SQLite store, looks the model's limits up in the catalog, and gives session handles whose `wrap` adds pivot's hooks
 * to the settings of `generateText`, `streamText` or `new ToolLoopAgent(…)` — composed with the hooks already there,
 * never replacing them. It is a thin shell: the `ContextManager` layer does the work, run by a `ManagedRuntime`.
 *
 * **Example**
 * ```ts
 * const pivot = await createPivot({ model, store: "./data/pivot.db", session: "fix-the-test" })
 * const agent = new ToolLoopAgent(pivot.wrap({ model, tools, stopWhen: stepCountIs(20) }))
 * const result = await pivot.run("Fix the failing test", (turn) => agent.generate(turn))
 * await pivot.close()
 * ```
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import {
  type Config as CoreConfig,
  type Message as CoreMessage,
  Ids,
  type Model,
  Prune,
  type Strategy,
} from "@pivot/core"
import {
  type CacheAware,
  Config,
  ContextManager,
  type ContextManagerShape,
  type Hud,
  InvalidOption,
  type InvalidToolKind,
  type Options as ManagerOptions,
  type Pins,
  type Probes,
  type ProviderErrorOutcome,
  type Recall,
  type Recorded,
  type Usage,
  type UserMessageInput,
} from "@pivot/runtime"
import { EventStore, ReadModels } from "@pivot/store"
import type {
  GenerateTextEndEvent,
  GenerateTextStepEndEvent,
  GenerateTextStepErrorEvent,
  LanguageModel,
  ModelMessage,
  PrepareStepFunction,
  ToolSet,
  UIMessage,
} from "ai"
import { Cause, Effect, Layer, Logger, ManagedRuntime, Redacted, Result, Schema } from "effect"
import * as AiAgent from "./Agent.ts"
import { type ContextToolSet, contextTools, withHud } from "./ContextTools.ts"
import * as AiJudge from "./Judge.ts"
import * as Messages from "./Messages.ts"
import * as AiSummarizer from "./Summarizer.ts"
import * as UiMessages from "./UiMessages.ts"

/** A usage object that is not the AI SDK's (see `Messages.validateUsage`). */
export { InvalidUsage } from "./Messages.ts"

/** The model has no limits in the catalog and none were given. */
export class UnknownModelLimits extends Schema.TaggedError<UnknownModelLimits>()("UnknownModelLimits", {
  model: Schema.String,
  option: Schema.String,
}) {
  override get message(): string {
    return `unknown model ${this.model}: pivot's catalog has no limits for it; pass them: createPivot({ …, ${this.option}: { context, output } })`
  }
}

/** The store's folder could not be created, or the store could not be opened there. */
export class StoreNotCreatable extends Schema.TaggedError<StoreNotCreatable>()("StoreNotCreatable", {
  path: Schema.String,
  reason: Schema.String,
}) {
  override get message(): string {
    return `cannot create the pivot store at ${this.path}: ${this.reason}; pass a writable file path (or ":memory:")`
  }
}

/** A session name that cannot name a session. */
export class InvalidSessionName extends Schema.TaggedError<InvalidSessionName>()("InvalidSessionName", {
  name: Schema.String,
}) {
  override get message(): string {
    return `invalid session name ${JSON.stringify(this.name.length > 40 ? `${this.name.slice(0, 40)}…` : this.name)}: a session name is 1 to ${Ids.MAX_SESSION_NAME} characters, not blank, without control characters`
  }
}

/** A model call with nothing to answer: the session has no user message and the call brought none. */
export class NoUserMessage extends Schema.TaggedError<NoUserMessage>()("NoUserMessage", {
  sessionId: Schema.String,
}) {
  override get message(): string {
    return `session ${this.sessionId} has no user message to answer: give the call a prompt, or record one first (pivot.run(text, call) or pivot.user(text))`
  }
}

/** A handle used after its pivot's `close()`: its runtime and store are gone. */
export class PivotClosed extends Schema.TaggedError<PivotClosed>()("PivotClosed", {}) {
  override get message(): string {
    return "this pivot is closed (close() was called): open another with createPivot"
  }
}

/**
 * Which defaults `createPivot` starts from. `"sized"` (default): pruning on, its thresholds relative to the model's
 * context (`Prune.sized`: protect 20%, act above 10%, capped at OpenCode's 40k / 20k). `"opencode"`: OpenCode's own
 * defaults exactly (pruning off; when switched on, the absolute 40k / 20k thresholds).
 */
export type Preset = "sized" | "opencode"

/** Whether a store string is a PostgreSQL URL (`postgres://…` or `postgresql://…`) rather than a SQLite path. */
export const isPostgresUrl = (store: string): boolean => /^postgres(ql)?:\/\//i.test(store)

// A PostgreSQL URL fit for messages: the password replaced.
const withoutPassword = (url: string): string => url.replace(/^(postgres(?:ql)?:\/\/[^:/@]*:)[^@]*@/i, "$1***@")

/** Options of `createPivot`. */
export interface CreateOptions {
  /** The session model: the model your agent calls. Its limits come from the catalog unless `limits` is given. */
  readonly model: LanguageModel
  /**
   * The event store: a SQLite file (its folder is created), a PostgreSQL URL (`postgres://user:pass@host/db`), or
   * `":memory:"` for a store that dies with the process.
   */
  readonly store: string
  /** The defaults to start from: `"sized"` (default) or `"opencode"` (see `Preset`); `config` and `manager` win. */
  readonly preset?: Preset | undefined
  /**
   * How the summariser calls its model: `"stream"` (default; a model that cannot stream is asked through
   * `generateText` instead) or `"generate"`.
   */
  readonly summarizerMode?: AiSummarizer.Mode | undefined
  /** The model's token limits, instead of the catalog's. */
  readonly limits?: Model.ModelLimits | undefined
  /** The session of the handle `createPivot` returns (any name; see `Ids.sessionIdOf`); default `"default"`. */
  readonly session?: string | undefined
  /**
   * The model that writes summaries; default `model`. `false`: pivot's deterministic extractive summary, no model
   * call. When the model's summary fails, the extractive one is used and `onWarning` says why.
   */
  readonly summarizer?: LanguageModel | false | undefined
  /** The summariser model's limits, instead of the catalog's (default: the catalog's, else the session model's). */
  readonly summarizerLimits?: Model.ModelLimits | undefined
  /** Compaction settings (OpenCode's keys: `auto`, `prune`, `reserved`, `tail_turns`, …). */
  readonly config?: CoreConfig.CompactionConfig | undefined
  /** The agent name recorded on messages and steps. */
  readonly agent?: string | undefined
  /** Where pivot's warnings go (a summary that fell back, …); default `console.warn`. */
  readonly onWarning?: ((message: string) => void) | undefined
  /**
   * The usage HUD (opt-in): before each step a short context status is added after your instructions, so the model
   * knows how full its context is and when to call `context_compact` (see `tools`).
   */
  readonly hud?: boolean | Hud.Options | undefined
  /** Further `ContextManager.layer` options (plugins, prune thresholds, time limits, …). */
  readonly manager?: Omit<ManagerOptions, "model" | "compactionModel" | "config"> | undefined
  /**
   * Cache-aware compaction (opt-in, ADR 0017): your agent's system prompt and tools, so that the summariser's request
   * starts with the same bytes as your calls and the provider serves the window from its cache; prune clears in
   * batches. The tools are sent as declarations only (never run by the summariser). See docs/ledger.md.
   */
  readonly cacheAware?: (CacheAware & { readonly system: string; readonly tools?: ToolSet | undefined }) | undefined
  /**
   * The context strategy (`Strategy.Strategy`: `OpenCodeStrategy.v1_18`, `CacheAwareStrategy.make(…)`, rules added
   * with `Strategy.withRules`, or your own; docs/strategies.md). Default: the preset's, or `cacheAware`'s when set.
   */
  readonly strategy?: Strategy.Strategy | undefined
  /**
   * Probes (opt-in): after each compaction, a judge model (`judge`, typically a small one) answers questions about the
   * span the summary replaced from the summary alone; pivot grades the answers and records them beside the pivot
   * (`pivot inspect`, the viewer). One more model call per compaction. See docs/ledger.md.
   */
  readonly probes?: (Probes.Options & { readonly judge: LanguageModel }) | undefined
}

/**
 * The hooks `wrap` composes, typed as the AI SDK calls them (methods, so that hooks typed for your own tool set fit).
 */
export interface Wrappable {
  /** Any other setting (model, tools, stopWhen, …) passes through unchanged. */
  readonly [setting: string]: unknown
  prepareStep?(options: Parameters<PrepareStepFunction<ToolSet>>[0]): unknown
  onStepEnd?(event: GenerateTextStepEndEvent<ToolSet>): unknown
  /** The AI SDK's deprecated name of `onStepEnd`. */
  onStepFinish?(event: GenerateTextStepEndEvent<ToolSet>): unknown
  onStepError?(event: GenerateTextStepErrorEvent<ToolSet>): unknown
  /** `streamText` only: stream errors. */
  onError?(event: { readonly error: unknown }): unknown
  onEnd?(event: GenerateTextEndEvent<ToolSet>): unknown
  /** The AI SDK's deprecated name of `onEnd`. */
  onFinish?(event: GenerateTextEndEvent<ToolSet>): unknown
}

/** The hook names `wrap` composes. */
export type HookName = "prepareStep" | "onStepEnd" | "onStepFinish" | "onStepError" | "onError" | "onEnd" | "onFinish"

type Fn = (...args: never) => unknown
type HookOf<S, K extends HookName> = S extends { readonly [k in K]?: infer F } ? Extract<F, Fn> : never
type ArgOf<F> = [F] extends [never] ? unknown : F extends (arg: infer A) => unknown ? A : unknown
type Either<S, A extends HookName, B extends HookName> = [HookOf<S, A>] extends [never] ? HookOf<S, B> : HookOf<S, A>
type PrepareResult<S> = [HookOf<S, "prepareStep">] extends [never]
  ? unknown
  : NonNullable<Awaited<ReturnType<HookOf<S, "prepareStep">>>>

/** The settings `wrap` returns: yours, with pivot's hooks composed in (deprecated aliases folded into the new names). */
export type Wrapped<S> = Omit<S, HookName> & {
  prepareStep(options: ArgOf<HookOf<S, "prepareStep">>): Promise<PrepareResult<S> & { messages: Array<ModelMessage> }>
  onStepEnd(event: ArgOf<Either<S, "onStepEnd", "onStepFinish">> & AiAgent.StepLike): Promise<void>
  onStepError(event: ArgOf<HookOf<S, "onStepError">> & { readonly error: unknown }): Promise<void>
  onError(event: ArgOf<HookOf<S, "onError">> & { readonly error: unknown }): Promise<void>
  onEnd(event: ArgOf<Either<S, "onEnd", "onFinish">>): Promise<void>
}

/** One session: wrap AI SDK settings, run turns, or drive your own loop (`messages` → your call → `record`). */
export interface PivotSession {
  /** The name given. */
  readonly name: string
  /** The session id it maps to (what `pivot inspect --session` takes). */
  readonly sessionId: string
  /**
   * Your AI SDK settings with pivot's hooks composed in: before each step `prepareStep` gives the session's window
   * (then calls yours, whose answer wins), after each step the step is recorded (then yours runs); `onEnd`,
   * `onStepError` and `onError` likewise. Pass the result to `generateText`, `streamText` or `new ToolLoopAgent`.
   */
  readonly wrap: <S extends Wrappable>(settings: S) => Wrapped<S>
  /**
   * One turn: records the user's message once, then calls `call` with `{ prompt }` to spread into the AI SDK call;
   * calls it again (at most `maxAttempts`, default 3) when the provider rejected the window as too long and pivot
   * compacted it.
   */
  readonly run: <A>(
    input: string | UserMessageInput,
    call: (turn: { readonly prompt: string }) => PromiseLike<A>,
    options?: { readonly maxAttempts?: number | undefined },
  ) => Promise<A>
  /** The model input of your next call (a compaction runs first when the context is full): a fresh mutable array. */
  readonly messages: () => Promise<Array<ModelMessage>>
  /** Records the user's message (for your own loop; `run` does it for you). */
  readonly user: (input: string | UserMessageInput) => Promise<void>
  /**
   * Records one step of your own call (an AI SDK `StepResult`, or the result of a one-step `generateText`), its usage
   * as the SDK gives it; a usage that is not the SDK's fails with `InvalidUsage` and records nothing.
   */
  readonly record: (step: AiAgent.StepLike) => Promise<Recorded>
  /** Records the result of a tool call that had none when its step ended (a client-side tool, an approval). */
  readonly recordToolResult: (toolCallId: string, outcome: AiAgent.ToolOutcome) => Promise<Recorded | undefined>
  /** The context usage: tokens, percent of the usable window, status. */
  readonly usage: () => Promise<Usage>
  /** Every message recorded, in order, markers and summaries included, pruned outputs in full (see `transcript`). */
  readonly transcript: () => Promise<ReadonlyArray<CoreMessage.Message>>
  /** The chat as a `useChat` UI shows it (`UiMessages.toUIMessages` of the transcript): to restore a chat's display. */
  readonly uiMessages: () => Promise<Array<UIMessage>>
  /** The last provider error reported during `run`, with what pivot made of it. */
  readonly lastError: () => ProviderErrorOutcome | undefined
  /** Tools for the model to steer its own context (`context_compact`): spread them into your `tools`. */
  readonly tools: ContextToolSet
  /**
   * Forks this session at `at` (default: now) into a new session named `into`, whose window there is this one's at
   * that version; this session is unchanged. Answers the new session's handle.
   */
  readonly fork: (into: string, options?: { readonly at?: number | undefined }) => Promise<PivotSession>
  /** `context_recall` for this session (what `RecallTool.tool(handle)` calls): an original by id, or a search. */
  readonly recall: (request: Recall.Request) => Promise<Recall.Recalled>
  /**
   * Pins a message (by `messageId`, `partId` or `quote`) so that it stays verbatim in every window after every pivot;
   * `by` defaults to `"user"` (`PinTool` passes `"model"`). Older pins give way when the budget is full.
   */
  readonly pin: (target: Pins.Target, by?: Pins.Actor) => Promise<Pins.Pinned>
  /** Removes the pins of a message (or of one part). */
  readonly unpin: (target: Pins.Target, by?: Pins.Actor) => Promise<Pins.Unpinned>
  /** The pins in force, oldest first, with the tokens they take and the budget. */
  readonly pins: () => Promise<Pins.PinList>
}

/** What `createPivot` returns: the handle of its session, other sessions, and `close`. */
export interface Pivot extends PivotSession, AsyncDisposable {
  /** The handle of another session (any name; the same name always finds the same session). */
  readonly session: (name: string) => PivotSession
  /** The runtime behind the handles, for Effect code (`runtime.runPromise(effect)` with `ContextManager`). */
  readonly runtime: ManagedRuntime.ManagedRuntime<Services, unknown>
  /** Closes the store. Handles must not be used afterwards. */
  readonly close: () => Promise<void>
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const orThrow = <A, E>(result: Result.Result<A, E>): A => {
  if (Result.isFailure(result)) throw result.failure
  return result.success
}

/** The session id a name maps to, or `InvalidSessionName`. */
export const sessionIdOf = (name: string): Result.Result<string, InvalidSessionName> => {
  const id = Ids.sessionIdOf(name)
  return id === undefined ? Result.fail(new InvalidSessionName({ name: String(name) })) : Result.succeed(id)
}

/** A model's spec: the given limits, else the catalog's (trying `provider/model` ids of gateway strings too). */
export const resolveLimits = (
  model: LanguageModel,
  limits: Model.ModelLimits | undefined,
  option: string,
  config?: CoreConfig.CompactionConfig,
): Result.Result<Config.ModelSpec, UnknownModelLimits | Config.ImpossibleLimits> => {
  const ref = AiSummarizer.modelRefOf(model)
  const gateway = typeof model === "string" ? Config.parseModelRef(model) : undefined
  const found =
    limits ??
    Config.catalogLimits(ref) ??
    (gateway !== undefined && Result.isSuccess(gateway) ? Config.catalogLimits(gateway.success) : undefined)
  if (found === undefined)
    return Result.fail(new UnknownModelLimits({ model: `${ref.providerId}/${ref.modelId}`, option }))
  return Result.map(Config.checkLimits(ref, found, config), (checked) => ({ ref, limits: checked }))
}

// Creates the store's folder; returns the first folder it created (to remove it again if the store fails to open).
const prepareStore = (store: string): { readonly file: string; readonly created: string | undefined } => {
  const file = Path.resolve(store)
  const folder = Path.dirname(file)
  let created: string | undefined
  try {
    created = Fs.mkdirSync(folder, { recursive: true })
  } catch (error) {
    // Node's message names the code and the folder it stopped at (e.g. `ENOTDIR: not a directory, mkdir '…'`).
    const reason = error instanceof Error ? error.message : String(error)
    throw new StoreNotCreatable({ path: file, reason: reason.split("\n")[0]! })
  }
  if (Fs.existsSync(file) && Fs.statSync(file).isDirectory()) {
    throw new StoreNotCreatable({ path: file, reason: "it is a folder" })
  }
  return { file, created }
}

const textOf = (message: unknown): string =>
  (Array.isArray(message) ? message : [message]).map((m) => (typeof m === "string" ? m : String(m))).join(" ")

/** Any bad input of `createPivot` or `layer`. */
export type CreateError =
  | UnknownModelLimits
  | Config.ImpossibleLimits
  | InvalidSessionName
  | StoreNotCreatable
  | InvalidToolKind
  | InvalidOption

// The runtime's part of `cacheAware` (the tools go to the summariser).
const managerCacheAware = ({ tools: _tools, ...rest }: NonNullable<CreateOptions["cacheAware"]>): CacheAware => rest

// The compaction config and prune thresholds of a preset; what the caller gave wins.
const presetSettings = (options: CreateOptions, context: number) => {
  if (options.preset === "opencode") return { config: options.config, prune: options.manager?.prune }
  return {
    // Beyond OpenCode: the first message (the task and its constraints) stays verbatim after every pivot (`Pins`).
    config: { prune: true, pin_first_message: true, ...options.config } satisfies CoreConfig.CompactionConfig,
    prune: options.manager?.prune ?? Prune.sized(context),
  }
}

// Opens the store a `store` string names; a store that does not open fails with `StoreNotCreatable` and leaves nothing.
const storeLayerOf = (store: string): Effect.Effect<Layer.Layer<EventStore, StoreNotCreatable>, StoreNotCreatable> =>
  Effect.gen(function* () {
    if (store === ":memory:") return EventStore.layerMemory()
    const opened = (layer: Layer.Layer<EventStore, unknown>, path: string, cleanUp: () => void) =>
      Layer.catchCause(layer, (cause) => {
        cleanUp()
        const error = Cause.squash(cause)
        const reason = (error instanceof Error ? error.message : String(error)).split("\n")[0]!
        return Layer.effect(EventStore, Effect.fail(new StoreNotCreatable({ path, reason })))
      })
    if (isPostgresUrl(store))
      return opened(ReadModels.layerPostgres({ url: Redacted.make(store) }), withoutPassword(store), () => {})
    const place = yield* Effect.try({
      try: () => prepareStore(store),
      catch: (error) =>
        error instanceof StoreNotCreatable ? error : new StoreNotCreatable({ path: store, reason: String(error) }),
    })
    // The store did not open: leave no folder behind that this call created.
    return opened(ReadModels.layerSqlite({ filename: place.file }), place.file, () => {
      if (place.created !== undefined) Fs.rmSync(place.created, { recursive: true, force: true })
    })
  })

/** What `layer` provides: the context manager and the event store under it. */
export type Services = ContextManager | EventStore

// A choice among names: a JavaScript caller's typo would otherwise be read silently as the default.
const oneOf = (option: string, value: unknown, allowed: ReadonlyArray<string>) =>
  value === undefined || allowed.includes(value as string)
    ? Effect.void
    : Effect.fail(
        new InvalidOption({
          option,
          value: JSON.stringify(value) ?? String(value),
          expected: allowed.map((name) => JSON.stringify(name)).join(" or "),
        }),
      )

// Checks the options (nothing touched yet): the session model's spec, the summariser's, the default session name.
const plan = (options: CreateOptions) =>
  Effect.gen(function* () {
    yield* oneOf("preset", options.preset, ["sized", "opencode"] satisfies ReadonlyArray<Preset>)
    yield* oneOf("summarizerMode", options.summarizerMode, [
      "stream",
      "generate",
    ] satisfies ReadonlyArray<AiSummarizer.Mode>)
    const model = yield* Effect.fromResult(resolveLimits(options.model, options.limits, "limits", options.config))
    const summarizerModel = options.summarizer === undefined ? options.model : options.summarizer
    const compactionModel: Config.ModelSpec | undefined =
      summarizerModel === false
        ? undefined
        : options.summarizerLimits === undefined &&
            Result.isFailure(resolveLimits(summarizerModel, undefined, "summarizerLimits", options.config))
          ? // A summariser the catalog does not know gets the session model's limits (it reads the same head).
            { ref: AiSummarizer.modelRefOf(summarizerModel), limits: model.limits }
          : yield* Effect.fromResult(
              resolveLimits(summarizerModel, options.summarizerLimits, "summarizerLimits", options.config),
            )
    yield* Effect.fromResult(sessionIdOf(options.session ?? "default"))
    return { model, compactionModel, summarizerModel }
  })

const probeOptions = ({ judge: _judge, ...rest }: NonNullable<CreateOptions["probes"]>): Probes.Options => rest

/**
 * pivot's layers from the same options as `createPivot`, for Effect programs: the `ContextManager` over a SQLite store
 * (its folder created) or a memory store, with a summariser over `summarizer`. Bad options fail the layer with the
 * same one-line errors, before anything is written. Warnings go through your Effect logger.
 *
 * **Example**
 * ```ts
 * program.pipe(Effect.provide(Pivot.layer({ model, store: "./data/pivot.db" })))
 * ```
 */
export const layer = (options: CreateOptions): Layer.Layer<Services, CreateError> =>
  Layer.unwrap(
    Effect.gen(function* () {
      const { model, compactionModel, summarizerModel } = yield* plan(options)
      const storeLayer = yield* storeLayerOf(options.store)
      const preset = presetSettings(options, model.limits.context)
      const managerLayer = ContextManager.layer({
        ...options.manager,
        model,
        ...(compactionModel === undefined ? {} : { compactionModel }),
        ...(preset.config === undefined ? {} : { config: preset.config }),
        ...(preset.prune === undefined ? {} : { prune: preset.prune }),
        ...(options.hud === undefined ? {} : { hud: options.hud }),
        ...(options.cacheAware === undefined ? {} : { cacheAware: managerCacheAware(options.cacheAware) }),
        ...(options.strategy === undefined ? {} : { strategy: options.strategy }),
        ...(options.probes === undefined ? {} : { probes: probeOptions(options.probes) }),
      })
      const summarizer = AiSummarizer.layer({
        model: summarizerModel === false ? options.model : summarizerModel,
        ...(options.summarizerMode === undefined ? {} : { mode: options.summarizerMode }),
        ...(options.cacheAware?.tools === undefined ? {} : { tools: options.cacheAware.tools }),
      })
      const withSummarizer = summarizerModel === false ? managerLayer : managerLayer.pipe(Layer.provide(summarizer))
      const withJudge =
        options.probes === undefined
          ? withSummarizer
          : withSummarizer.pipe(Layer.provide(AiJudge.layer({ model: options.probes.judge })))
      return withJudge.pipe(Layer.provide(Ids.Ids.layer), Layer.provideMerge(storeLayer))
    }),
  ) as Layer.Layer<Services, CreateError>

// The handle of one session over a runner of ContextManager effects.
const open = (runner: AiAgent.Runner, name: string, sessionId: string, agent: string | undefined): PivotSession => {
  const hooks = AiAgent.fromRuntime(runner, { sessionId, ...(agent === undefined ? {} : { agent }) })
  const cm = <A, E>(use: (manager: ContextManagerShape) => Effect.Effect<A, E>): Promise<A> =>
    runner.runPromise(
      Effect.gen(function* () {
        return yield* use(yield* ContextManager)
      }),
    )

  // A call made without `run` or `user` brings its own prompt: its newest user message is recorded at the call's first
  // step, unless the window already ends with it (the same call retried). `run` and `user` record it themselves.
  let inRun = 0
  let userPending = false
  const prepareFor = async (stepOptions: unknown): Promise<Array<ModelMessage>> => {
    const { messages } = await hooks.settings.prepareStep()
    const first = isRecord(stepOptions) && (stepOptions.stepNumber ?? 0) === 0
    const given =
      first && inRun === 0 && !userPending && isRecord(stepOptions) && Array.isArray(stepOptions.messages)
        ? UiMessages.newestUserInput(stepOptions.messages as Array<ModelMessage>)
        : undefined
    const last = messages.at(-1)
    const answered = last !== undefined && last.role === "user" && UiMessages.newestUserInput([last]) === given
    if (given !== undefined && given.trim() !== "" && !answered) {
      await hooks.user(given)
      return prepareFor({ stepNumber: 1 })
    }
    if (messages.length === 0) throw new NoUserMessage({ sessionId })
    return messages
  }

  const wrap = <S extends Wrappable>(settings: S): Wrapped<S> => {
    const { prepareStep, onStepEnd, onStepFinish, onStepError, onError, onEnd, onFinish, ...rest } = settings
    const theirStepEnd = (onStepEnd ?? onStepFinish) as ((event: unknown) => unknown) | undefined
    const theirEnd = (onEnd ?? onFinish) as ((event: unknown) => unknown) | undefined
    const theirStepError = onStepError as ((event: unknown) => unknown) | undefined
    const theirError = onError as ((event: unknown) => unknown) | undefined
    const theirPrepare = prepareStep as ((options: unknown) => unknown) | undefined
    const wrapped = {
      ...rest,
      prepareStep: async (stepOptions: unknown) => {
        const messages = await prepareFor(stepOptions)
        const hud = hooks.lastPrepared()?.hud
        const answered =
          theirPrepare === undefined
            ? undefined
            : await theirPrepare(isRecord(stepOptions) ? { ...stepOptions, messages } : { messages })
        const theirs = isRecord(answered) ? answered : {}
        if (hud === undefined) return { messages, ...theirs }
        // The HUD follows the step's instructions: theirs for this step, else the ones set on the call.
        const base = theirs.instructions ?? theirs.system ?? rest.instructions ?? rest.system
        const { system: _system, ...kept } = theirs
        return { messages, ...kept, instructions: withHud(base, hud) }
      },
      onStepEnd: async (event: AiAgent.StepLike) => {
        userPending = false
        await hooks.settings.onStepEnd(event)
        await theirStepEnd?.(event)
      },
      onStepError: async (event: { readonly error: unknown }) => {
        await hooks.settings.onStepError(event)
        await theirStepError?.(event)
      },
      onError: async (event: { readonly error: unknown }) => {
        await hooks.settings.onError(event)
        await theirError?.(event)
      },
      onEnd: async (event: unknown) => {
        await hooks.settings.onEnd()
        await theirEnd?.(event)
      },
    }
    return wrapped as unknown as Wrapped<S>
  }

  const run = async <A>(
    input: string | UserMessageInput,
    call: (turn: { readonly prompt: string }) => PromiseLike<A>,
    runOptions?: { readonly maxAttempts?: number | undefined },
  ): Promise<A> => {
    const turn = await hooks.user(input)
    inRun++
    try {
      return await hooks.run(() => call(turn), runOptions)
    } finally {
      inRun--
    }
  }

  const record = async (step: AiAgent.StepLike): Promise<Recorded> => {
    userPending = false
    const usage = orThrow(Messages.validateUsage(isRecord(step) ? step.usage : undefined))
    const model = AiAgent.stepModel(step)
    return cm((manager) =>
      manager.recordAssistantStep(sessionId, {
        // Read field by field: the SDK's results expose them as getters, which a spread would lose.
        parts: AiAgent.stepParts({
          content: step.content,
          finishReason: step.finishReason,
          usage,
          providerMetadata: step.providerMetadata,
        }),
        usage: Messages.toTokenUsage(usage, step.providerMetadata),
        finish: step.finishReason,
        ...(model === undefined ? {} : { model }),
        ...(agent === undefined ? {} : { agent }),
      }),
    )
  }

  return {
    name,
    sessionId,
    wrap,
    run,
    messages: async () => (await hooks.settings.prepareStep()).messages,
    user: async (input) => {
      await hooks.user(input)
      userPending = true
    },
    record,
    recordToolResult: hooks.recordToolResult,
    usage: () => cm((manager) => manager.usage(sessionId)),
    transcript: () => cm((manager) => manager.transcript(sessionId)),
    uiMessages: async () => UiMessages.toUIMessages(await cm((manager) => manager.transcript(sessionId))),
    lastError: hooks.lastError,
    tools: contextTools(runner, sessionId),
    fork: async (into, forkOptions) => {
      const childId = orThrow(sessionIdOf(into))
      await cm((manager) => manager.fork(sessionId, { into: childId, at: forkOptions?.at }))
      return open(runner, into, childId, agent)
    },
    recall: (request) => cm((manager) => manager.recall(sessionId, request)),
    pin: (target, by) => cm((manager) => manager.pin(sessionId, target, by)),
    unpin: (target, by) => cm((manager) => manager.unpin(sessionId, target, by)),
    pins: () => cm((manager) => manager.pins(sessionId)),
  }
}

/**
 * The handle of a session (any name) bound to the `ContextManager` in context: the same `wrap` / `run` / `messages`
 * / `record` as `createPivot`'s, inside an Effect program.
 */
export const session = (
  name: string,
  options: { readonly agent?: string | undefined } = {},
): Effect.Effect<PivotSession, InvalidSessionName, ContextManager> =>
  Effect.gen(function* () {
    const sessionId = yield* Effect.fromResult(sessionIdOf(name))
    const context = yield* Effect.context<ContextManager>()
    return open({ runPromise: (effect) => Effect.runPromiseWith(context)(effect) }, name, sessionId, options.agent)
  })

/**
 * Opens pivot for an AI SDK agent in one call: the store (its folder created), the model's limits (from the catalog
 * unless given), a summariser over `summarizer` (default: the session model), and the handle of one session.
 * Bad input fails before anything is written, with a one-line typed error: `UnknownModelLimits`, `ImpossibleLimits`,
 * `InvalidSessionName`, `StoreNotCreatable`, `InvalidToolKind`, `InvalidOption`.
 */
export const createPivot = async (options: CreateOptions): Promise<Pivot> => {
  const onWarning = options.onWarning ?? ((message: string) => console.warn(message))
  const warnings = Logger.make((entry) => {
    if (entry.logLevel === "Warn" || entry.logLevel === "Error" || entry.logLevel === "Fatal")
      onWarning(textOf(entry.message))
  })
  const runtime = ManagedRuntime.make(layer(options).pipe(Layer.provideMerge(Logger.layer([warnings]))))
  try {
    await runtime.context()
  } catch (error) {
    await runtime.dispose()
    throw error
  }
  const name = options.session ?? "default"
  // Every handle runs through this runner: after close() a call fails with PivotClosed, not the disposed runtime's
  // bare string.
  let closed = false
  const runner: AiAgent.Runner = {
    runPromise: (effect) => (closed ? Promise.reject(new PivotClosed()) : runtime.runPromise(effect)),
  }
  const handle = (sessionName: string) => open(runner, sessionName, orThrow(sessionIdOf(sessionName)), options.agent)
  const main = handle(name)
  const close = () => {
    closed = true
    return runtime.dispose()
  }
  return {
    ...main,
    session: handle,
    runtime: runtime as ManagedRuntime.ManagedRuntime<Services, unknown>,
    close,
    [Symbol.asyncDispose]: close,
  }
}
