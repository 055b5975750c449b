/**
 * The service users embed in their agent loop: record what happens (user messages, model steps, tool results,
 * provider errors), then `prepare` the model input before each call. `prepare` first drives any outstanding
 * compaction to its end, then checks whether the last call filled the context (spec §2.4 rule B) and compacts if
 * so. Compaction is bounded: after `maxConsecutiveCompactions` in a row that brought no progress, it stops and says so.
 *
 * **Example**
 * ```ts
 * const program = Effect.gen(function* () {
 *   const cm = yield* ContextManager
 *   yield* cm.recordUserMessage(sessionId, { text: "Fix the failing test" })
 *   const input = yield* cm.prepare(sessionId)            // input.messages → the model
 *   yield* cm.recordAssistantStep(sessionId, { parts, usage, finish: "tool-calls" })
 * }).pipe(
 *   Effect.provide(ContextManager.layer({ model: { ref, limits } })),
 *   Effect.provide(EventStore.layerSqlite({ filename: ".pivot/pivot.db" })),
 *   Effect.provide(Ids.layer),
 * )
 * ```
 */
import {
  CacheAwareStrategy,
  type Commands,
  Conversation,
  type Config as CoreConfig,
  Ids,
  type Message,
  type Model,
  type ModelMessage,
  OpenCodeStrategy,
  Prompt,
  ProviderError,
  Render,
  SchemaIssues,
  Session,
  type Strategy,
  Tokens,
  Traced,
  Usage as UsageFold,
  ValidWindow,
  Window,
} from "@pivot/core"
import { type EventStore, ReadModels } from "@pivot/store"
import { Clock, Context, Duration, Effect, Layer, Option, Result, Schema, Semaphore } from "effect"
import * as Compaction from "./Compaction.ts"
import { checkLimits, type ImpossibleLimits, type ModelSpec, priceOf } from "./Config.ts"
import * as Hud from "./Hud.ts"
import { Judge } from "./Judge.ts"
import * as LiveLedger from "./LiveLedger.ts"
import * as ManualCompaction from "./ManualCompaction.ts"
import * as PinOps from "./Pins.ts"
import * as Plugins from "./Plugins.ts"
import * as Probes from "./Probes.ts"
import * as Recall from "./Recall.ts"
import { type Command, type Event, Sessions, type State } from "./Sessions.ts"
import * as Status from "./Status.ts"
import * as StrategyRunner from "./StrategyRunner.ts"
import { Summarizer } from "./Summarizer.ts"
import * as WindowCache from "./WindowCache.ts"

/** Whether a decision records nothing. */
const isNoOp = (decided: ReturnType<typeof Session.decide>): boolean =>
  Result.isSuccess(decided) && decided.success.length === 0

export * from "./ContextManagerTypes.ts"

import {
  type AssistantStepInput,
  type Compacted,
  type CompactRequest,
  type ContextManagerShape,
  type InvalidOption,
  InvalidSessionId,
  type InvalidToolKind,
  InvalidUsage,
  type Options,
  type PartInput,
  type Prepared,
  type ProviderErrorInput,
  type Pruned,
  type Recorded,
  type SessionOverride,
  type ToolResultInput,
  type Usage,
  type UserMessageInput,
} from "./ContextManagerTypes.ts"
import { cacheAwareOf, checkOptions, checkToolKinds, decodeUsage } from "./internal/checkOptions.ts"

/** The context manager. */
export class ContextManager extends Context.Service<ContextManager, ContextManagerShape>()(
  "@pivot/runtime/ContextManager",
) {
  /**
   * The context manager with its own `Sessions` handler over the `EventStore` in context. Uses the `Summarizer` in
   * context when there is one, else the extractive summariser. Fails with `ImpossibleLimits` for unusable models,
   * `InvalidToolKind` for a `toolKinds` entry that is not a kind and `InvalidOption` for a duration or count that is
   * not one.
   */
  static readonly layer = (
    options: Options,
  ): Layer.Layer<ContextManager | Sessions, ImpossibleLimits | InvalidToolKind | InvalidOption, EventStore | Ids.Ids> =>
    Layer.effect(ContextManager, make(options)).pipe(
      Layer.provideMerge(
        Sessions.layer({
          redactOnRecord: options.redactOnRecord,
          encryptAtRest: options.encryptAtRest,
          snapshots: options.snapshots,
          boundedMemory: options.boundedMemory,
        }),
      ),
    )

  /** The context manager over a `Sessions` handler provided separately. */
  static readonly layerWithSessions = (
    options: Options,
  ): Layer.Layer<ContextManager, ImpossibleLimits | InvalidToolKind | InvalidOption, Sessions | Ids.Ids> =>
    Layer.effect(ContextManager, make(options))
}

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

/** Builds the context manager (see `ContextManager.layer`). */
export const make = (
  options: Options,
): Effect.Effect<ContextManagerShape, ImpossibleLimits | InvalidToolKind | InvalidOption, Sessions | Ids.Ids> =>
  Effect.gen(function* () {
    yield* checkToolKinds(options.toolKinds)
    yield* checkOptions(options)
    const sessions = yield* Sessions
    const ids = yield* Ids.Ids
    const provided = Option.getOrUndefined(yield* Effect.serviceOption(Summarizer))
    // The extractive summariser provided as a service is the built-in default, which also reads the kept tail.
    const summarizer = provided === Summarizer.extractive ? undefined : provided
    const plugins = options.plugins ?? []
    const limit = Math.max(1, Math.floor(options.maxConsecutiveCompactions ?? 2))
    const warnAt = options.warnAt ?? 0.8
    const recallOn = options.recall !== undefined && options.recall !== false
    // The HUD says pruned outputs are recallable when the placeholders name their recall ids.
    const hudOptions =
      options.hud === undefined || options.hud === false
        ? undefined
        : { recall: recallOn, ...(options.hud === true ? {} : options.hud) }
    // The HUD's cost line reads the ledger, caught up per session as the log grows.
    const hudCost = hudOptions?.cost
    const ledgerAt =
      hudCost === undefined || hudCost === false
        ? undefined
        : LiveLedger.make(sessions, (ref) => priceOf(ref, hudCost === true ? {} : (hudCost.prices ?? {})))
    const strategy = strategyOf(options)
    // The strategy's settings over the application's (cache-aware: an earlier threshold, no tail of old turns).
    const baseConfig: CoreConfig.CompactionConfig =
      strategy.configure === undefined ? (options.config ?? {}) : strategy.configure(options.config ?? {})
    const recallOptions = typeof options.recall === "object" ? options.recall : {}
    const renderOptions: Render.Options =
      options.recall === undefined || options.recall === false ? {} : { recallIds: true }
    const readModels = Option.getOrUndefined(yield* Effect.serviceOption(ReadModels.ReadModels))
    const judge = Option.getOrUndefined(yield* Effect.serviceOption(Judge))
    const probe =
      options.probes === undefined || options.probes === false || judge === undefined
        ? undefined
        : Probes.make(sessions, judge, options.probes === true ? {} : options.probes)
    /** Probes the pivot a settled compaction formed, when probes are on. */
    const probed = (sessionId: string, settled: Compaction.Settled) =>
      probe === undefined || settled.outcome === undefined ? Effect.void : probe(sessionId, settled.outcome)
    const redactSecrets = options.redactSecrets ?? true
    yield* checkSpec(options.model, baseConfig)
    if (options.compactionModel !== undefined) yield* checkSpec(options.compactionModel, baseConfig)

    const compaction = Compaction.make({
      sessions,
      ids,
      options: {
        summarizer,
        plugins,
        summaryTimeout: options.summaryTimeout ?? "2 minutes",
        fallback: options.fallback ?? true,
        redactSecrets,
        factsBlock: options.factsBlock ?? true,
        ...(strategy.form === "cache-safe"
          ? { cacheAware: { system: strategy.system ?? Prompt.SYSTEM_PROMPT, render: renderOptions } }
          : {}),
        toolKinds: options.toolKinds,
      },
    })

    const locks = new Map<string, Semaphore.Semaphore>()
    /** One compaction-driving operation per session at a time in this process (others still race safely). */
    const locked = <A, E, R>(sessionId: string, effect: Effect.Effect<A, E, R>) => {
      let lock = locks.get(sessionId)
      if (lock === undefined) {
        lock = Semaphore.makeUnsafe(1)
        locks.set(sessionId, lock)
      }
      return Semaphore.withPermit(lock)(effect)
    }

    // Without overrides every call answers these same settings (the same object, so `prepare` can compare them).
    const baseSettings: Compaction.Settings = {
      model: options.model,
      compactionModel: options.compactionModel ?? options.model,
      config: baseConfig,
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
        return { model, compactionModel, config } satisfies Compaction.Settings
      })

    /**
     * Gives every part an id: derived from the message's when the caller named the message (so a retry of the same
     * input is the same message, not a `MessageConflict`), fresh otherwise.
     */
    const fillParts = <P extends { readonly id?: Ids.PartId | undefined }>(
      parts: ReadonlyArray<P>,
      message: Ids.MessageId | undefined,
    ) =>
      Effect.forEach(parts, (part, index) =>
        part.id !== undefined
          ? Effect.succeed(part)
          : message !== undefined
            ? Effect.succeed({ ...part, id: Ids.partOf(message, index) })
            : Effect.map(ids.part, (id) => ({ ...part, id })),
      )

    /** Starts the session in the same batch when it has not started. */
    const withStart = (sessionId: string, state: State, at: number, commands: ReadonlyArray<Command>) =>
      state.session.sessionId === undefined
        ? [
            {
              _tag: "StartSession",
              sessionId: sessionId as Ids.SessionId,
              at,
              model: options.session?.(sessionId)?.model?.ref ?? options.model.ref,
            } satisfies Command,
            ...commands,
          ]
        : commands

    const summarise = (events: ReadonlyArray<Event>, messageId?: Ids.MessageId): Recorded => ({
      events,
      overflow: events.some((e) => e._tag === "OverflowDetected"),
      ...(events.some((e) => e._tag === "CompactionRequested")
        ? { compaction: "requested" as const }
        : events.some((e) => e._tag === "CompactionAbandoned")
          ? { compaction: "abandoned" as const }
          : {}),
      ...(messageId === undefined ? {} : { messageId }),
    })

    const start = Traced.fn("ContextManager.start")(function* (
      sessionId: string,
      startOptions?: { readonly title?: string | undefined; readonly model?: Model.ModelRef | undefined },
    ) {
      const settings = yield* settingsFor(sessionId)
      const at = yield* Clock.currentTimeMillis
      const executed = yield* sessions.execute(sessionId, {
        _tag: "StartSession",
        sessionId: sessionId as Ids.SessionId,
        at,
        model: startOptions?.model ?? settings.model.ref,
        ...(startOptions?.title === undefined ? {} : { title: startOptions.title }),
      })
      return summarise(executed.events)
    })

    const recordUserMessage = Traced.fn("ContextManager.recordUserMessage")(function* (
      sessionId: string,
      input: UserMessageInput,
    ) {
      const settings = yield* settingsFor(sessionId)
      const at = yield* Clock.currentTimeMillis
      const id = input.id ?? (yield* ids.message)
      const given = [
        ...(input.text === undefined ? [] : [{ type: "text" as const, text: input.text }]),
        ...(input.parts ?? []),
      ]
      const parts = (yield* fillParts(
        given as ReadonlyArray<PartInput<Message.UserPart>>,
        input.id,
      )) as ReadonlyArray<Message.UserPart>
      const message: Message.UserMessage = {
        role: "user",
        id,
        createdAt: at,
        model: input.model ?? settings.model.ref,
        ...(input.agent === undefined ? {} : { agent: input.agent }),
        ...(input.system === undefined ? {} : { system: input.system }),
        parts,
      }
      const executed = yield* sessions.execute(sessionId, (state) =>
        withStart(sessionId, state, at, [
          { _tag: "AddUserMessage", message },
          ...PinOps.defaultPin(state, message, settings.config, settings.model.limits, at),
        ]),
      )
      return summarise(executed.events, id)
    })

    const recordAssistantStep = Traced.fn("ContextManager.recordAssistantStep")(function* (
      sessionId: string,
      input: AssistantStepInput,
    ) {
      // Checked where it enters: a wrong usage is one typed line, not a schema error deep in the event encoder.
      const usage = decodeUsage(input.usage)
      if (Result.isFailure(usage))
        return yield* new InvalidUsage({ detail: SchemaIssues.oneLine(usage.failure, "usage") })
      const settings = yield* settingsFor(sessionId)
      const at = yield* Clock.currentTimeMillis
      const id = input.id ?? (yield* ids.message)
      const parts = (yield* fillParts(input.parts, input.id)) as ReadonlyArray<Message.AssistantPart>
      const markerId = yield* ids.message
      const partId = yield* ids.part
      const state = yield* sessions.load(sessionId)
      const parentId = input.parentId ?? state.runtime.lastUserId ?? id
      const message: Message.AssistantMessage = {
        role: "assistant",
        id,
        parentId,
        createdAt: input.createdAt ?? at,
        completedAt: at,
        model: input.model ?? settings.model.ref,
        ...(input.agent === undefined ? {} : { agent: input.agent }),
        ...(input.mode === undefined ? {} : { mode: input.mode }),
        tokens: usage.success,
        ...(input.cost === undefined ? {} : { cost: input.cost }),
        ...(input.finish === undefined ? {} : { finish: input.finish }),
        parts,
      }
      // Usage measured before the latest pivot says nothing about the window now: no overflow is detected from it.
      const commandOn = (current: State): Commands.Command => ({
        _tag: "RecordAssistantStep",
        message,
        config: settings.config,
        ...(UsageFold.predatesPivot(current.runtime.usage, message) ? {} : { limits: settings.model.limits }),
      })
      const executed = yield* sessions.execute(sessionId, (current) =>
        runner.withCompaction(commandOn(current), at, markerId, partId, false)(current),
      )
      return summarise(executed.events, id)
    })

    const recordToolResult = Traced.fn("ContextManager.recordToolResult")(function* (
      sessionId: string,
      input: ToolResultInput,
    ) {
      yield* settingsFor(sessionId)
      const at = yield* Clock.currentTimeMillis
      const executed = yield* sessions.execute(sessionId, {
        _tag: "RecordToolResult",
        at,
        messageId: input.messageId,
        partId: input.partId,
        state: input.state,
      })
      return summarise(executed.events)
    })

    const reportProviderError = Traced.fn("ContextManager.reportProviderError")(function* (
      sessionId: string,
      input: ProviderErrorInput,
    ) {
      const settings = yield* settingsFor(sessionId)
      const at = yield* Clock.currentTimeMillis
      const error = ProviderError.fromUnknown(input.error)
      const id = input.id ?? (yield* ids.message)
      const parts = (yield* fillParts(input.parts ?? [], input.id)) as ReadonlyArray<Message.AssistantPart>
      const markerId = yield* ids.message
      const partId = yield* ids.part
      const state = yield* sessions.load(sessionId)
      const message: Message.AssistantMessage = {
        role: "assistant",
        id,
        parentId: input.parentId ?? state.runtime.lastUserId ?? id,
        createdAt: at,
        model: input.model ?? settings.model.ref,
        ...(input.agent === undefined ? {} : { agent: input.agent }),
        tokens: Tokens.zero,
        ...(input.finish === undefined ? {} : { finish: input.finish }),
        parts,
      }
      const command: Commands.Command = { _tag: "ReportProviderError", at, message, error, config: settings.config }
      // After a rejection before any output the turn is replayed; after a finished call, a continue message follows.
      const executed = yield* sessions.execute(
        sessionId,
        runner.withCompaction(command, at, markerId, partId, input.finish === undefined),
      )
      const recorded = summarise(executed.events, id)
      const action =
        recorded.compaction === "requested"
          ? ("compact" as const)
          : !recorded.overflow && ProviderError.isRetryable(error)
            ? ("retry" as const)
            : ("stop" as const)
      return { ...recorded, error, action }
    })

    const usageOf = (sessionId: string, state: State, settings: Compaction.Settings): Usage =>
      Status.usageOf(state, settings, warnAt, () => estimateWindow(sessionId, state) + (options.overheadTokens ?? 0))

    /** `Tokens.estimate` of the rendered window's JSON, from the session's renderer (nothing rendered twice). */
    const estimateWindow = (sessionId: string, state: State) =>
      Tokens.estimateLength(
        rendererOf(sessionId).jsonLength(renderedOf(sessionId, state.session.window, Window.messages)),
      )

    // Each session's window rendered incrementally, its visible messages and renderings kept (issue 23).
    const { rendererOf, visibleOf, renderedOf } = WindowCache.make(renderOptions)
    // The strategy, asked before each call, after each step and when a compaction starts.
    const runner = StrategyRunner.make({ sessions, ids, strategy, prune: options.prune ?? {}, limit, visibleOf })
    /** Drives the session's outstanding compaction, with what the strategy keeps of the turn in progress. */
    const settle = (sessionId: string, settings: Compaction.Settings) =>
      Effect.flatMap(runner.forCompaction(sessionId, settings), (withKeep) => compaction.settle(sessionId, withKeep))

    // The latest answer of `prepare` per session, with the state and settings it was made from: asked again on the
    // same state (no event since, nothing pending) it is the same answer, so it is answered without the lock.
    const lastPrepared = new Map<
      string,
      { readonly state: State; readonly settings: Compaction.Settings; readonly prepared: Prepared }
    >()
    const transformsWindow = plugins.some((p) => p.transformWindow !== undefined)
    const sameSettings = (a: Compaction.Settings, b: Compaction.Settings) =>
      a.model === b.model && a.compactionModel === b.compactionModel && a.config === b.config

    const overflowCheck = (settings: Compaction.Settings, at: number): Commands.Command => ({
      _tag: "CheckOverflow",
      at,
      config: settings.config,
      limits: settings.model.limits,
    })
    /**
     * Whether the overflow check would record on `state` (an overflow, a compaction to request). Usage measured before
     * the latest pivot is not checked (`Usage`'s staleness rule); nothing is while a compaction is pending.
     */
    const overflowsIn = (state: State, check: Commands.Command) =>
      state.session.sessionId !== undefined &&
      state.session.pending === undefined &&
      state.runtime.usage.stale !== "pivot" &&
      !isNoOp(Session.decide(check, state.session))

    /**
     * `prepare`'s answer on `state` and the window `shown` (the visible messages, or a plugin's change of them), with
     * the HUD it would show; recording that HUD is the caller's business.
     */
    const answerOf = (
      sessionId: string,
      settings: Compaction.Settings,
      state: State,
      visible: ReadonlyArray<Message.Message>,
      shown: ReadonlyArray<Message.Message>,
      settled: Compaction.Settled | undefined,
    ) =>
      Effect.gen(function* () {
        // The repair is a no-op on a valid window; it only ever changes a corrupt imported history. The session's
        // renderer renders only what changed since its last window; its messages are shared from turn to turn and
        // frozen, so a caller cannot change them in place (ADR 0023: it copies what it changes).
        const messages =
          shown === visible
            ? renderedOf(sessionId, state.session.window, visible)
            : ValidWindow.render(shown, renderOptions).map(Render.freeze)
        // Kept beside the rendering by the session's renderer (a plugin's window: read from each message).
        const modelMessages =
          shown === visible ? rendererOf(sessionId).modelMessages(messages) : messages.map((r) => r.message)
        const usage = usageOf(sessionId, state, settings)
        // The cost line: the ledger of the log exactly as `state` stands (a compaction just settled included).
        const cost = ledgerAt === undefined ? undefined : Hud.costOf(yield* ledgerAt(sessionId, state.session.version))
        const hud = hudOptions === undefined ? undefined : Status.hudOf(state, usage, hudOptions, cost)
        return {
          messages,
          modelMessages: modelMessages as Array<ModelMessage.ModelMessage>,
          ...(settled === undefined ? {} : { compaction: settled }),
          next: Status.nextStep(state, visible),
          usage,
          ...(hud === undefined ? {} : { hud }),
        } satisfies Prepared as Prepared
      })

    /** Keeps (or forgets) the session's latest answer, for a `prepare` asked again on the same state. */
    const remember = (
      sessionId: string,
      latest:
        | { readonly state: State; readonly settings: Compaction.Settings; readonly prepared: Prepared }
        | undefined,
    ) => {
      lastPrepared.delete(sessionId)
      if (latest === undefined) return
      lastPrepared.set(sessionId, latest)
      if (lastPrepared.size > 1_000) lastPrepared.delete(lastPrepared.keys().next().value!)
    }

    /** An answer as handed out: arrays of the caller's own (the renderings in them are frozen and shared). */
    const handedOut = (prepared: Prepared): Prepared => ({
      ...prepared,
      messages: [...prepared.messages],
      modelMessages: [...prepared.modelMessages],
    })

    const prepare = Traced.fn("ContextManager.prepare")(function* (sessionId: string) {
      const settings = yield* settingsFor(sessionId)
      yield* runner.beforeCall(sessionId, settings)
      const last = lastPrepared.get(sessionId)
      if (last !== undefined && sameSettings(last.settings, settings)) {
        const state = yield* sessions.load(sessionId)
        if (state === last.state) return handedOut(last.prepared)
      }
      // The common turn records nothing (nothing outstanding, no overflow, no plugin, the HUD unchanged): answered on
      // the state in hand without the session's lock, as if it ran just before any operation holding it.
      if (!transformsWindow) {
        const state = yield* sessions.load(sessionId)
        if (state.session.pending === undefined && state.runtime.awaitingContinue === undefined) {
          const check = overflowCheck(settings, yield* Clock.currentTimeMillis)
          if (!overflowsIn(state, check)) {
            const visible = visibleOf(sessionId, state.session.window)
            const prepared = yield* answerOf(sessionId, settings, state, visible, visible, undefined)
            if (prepared.hud === undefined || prepared.hud === state.runtime.hud) {
              remember(sessionId, { state, settings, prepared })
              return handedOut(prepared)
            }
          }
        }
      }
      const prepared = yield* locked(
        sessionId,
        Effect.gen(function* () {
          let state = yield* sessions.load(sessionId)
          let settled: Compaction.Settled | undefined
          // Nothing outstanding (the common turn): `settle` would load the same state and find nothing to do.
          if (state.session.pending !== undefined || state.runtime.awaitingContinue !== undefined) {
            const first = yield* settle(sessionId, settings)
            yield* probed(sessionId, first)
            settled = first.outcome === undefined && first.continuation === undefined ? undefined : first
            state = yield* sessions.load(sessionId)
          }
          const at = yield* Clock.currentTimeMillis
          const check = overflowCheck(settings, at)
          // The pre-check on the state in hand: when it finds nothing, nothing would be recorded (the common turn).
          if (overflowsIn(state, check)) {
            const markerId = yield* ids.message
            const partId = yield* ids.part
            const executed = yield* sessions.execute(
              sessionId,
              runner.withCompaction(check, at, markerId, partId, false),
            )
            state = executed.state
            if (executed.events.some((e) => e._tag === "CompactionRequested")) {
              const second = yield* settle(sessionId, settings)
              yield* probed(sessionId, second)
              settled = second
              state = yield* sessions.load(sessionId)
            }
          }
          // A plugin gets an array of its own; otherwise the session's kept one (read, never changed, here).
          const visible = transformsWindow
            ? Window.messages(state.session.window)
            : visibleOf(sessionId, state.session.window)
          const transformed = transformsWindow
            ? yield* Plugins.transformWindow(plugins, { sessionId, messages: visible })
            : { messages: visible, failures: [] }
          if (transformed.failures.length > 0) {
            const at = yield* Clock.currentTimeMillis
            yield* sessions.execute(sessionId, {
              _tag: "Record",
              events: transformed.failures.map((f) => Compaction.pluginFailed(at, f)),
            })
          }
          const prepared = yield* answerOf(sessionId, settings, state, visible, transformed.messages, settled)
          if (
            prepared.hud !== undefined &&
            prepared.hud !== state.runtime.hud &&
            state.session.sessionId !== undefined
          ) {
            const at = yield* Clock.currentTimeMillis
            yield* sessions.execute(sessionId, {
              _tag: "Record",
              events: [{ _tag: "HudShown", at, text: prepared.hud }],
            })
          }
          // Reusable when nothing was recorded after `state` here (no HUD change, no plugin failure) and nothing waits.
          const canReuse =
            !transformsWindow &&
            settled === undefined &&
            (prepared.hud === undefined || prepared.hud === state.runtime.hud) &&
            state.session.pending === undefined &&
            state.runtime.awaitingContinue === undefined
          remember(sessionId, canReuse ? { state, settings, prepared } : undefined)
          return prepared
        }),
      )
      return handedOut(prepared)
    })

    const compact = Traced.fn("ContextManager.compact")(function* (sessionId: string, request?: CompactRequest) {
      const settings = yield* settingsFor(sessionId)
      const byModel = request?.requestedBy === "model"
      return yield* locked(
        sessionId,
        Effect.gen(function* () {
          const state = yield* sessions.load(sessionId)
          if (byModel) {
            const declined = Status.declineOf(state)
            if (declined !== undefined) return { declined } satisfies Compacted
          }
          if (state.session.pending === undefined) {
            const at = yield* Clock.currentTimeMillis
            const markerId = yield* ids.message
            const partId = yield* ids.part
            const { create, records } = ManualCompaction.commandsOf(state, request, {
              at,
              markerId,
              partId,
              redactSecrets,
            })
            // A model's request is re-judged on the state it is decided on: another writer may have compacted first.
            const executed = yield* sessions.execute(sessionId, (current) =>
              !byModel
                ? [create]
                : Status.declineOf(current) === undefined
                  ? [create, { _tag: "Record", events: records }]
                  : [],
            )
            if (byModel && executed.events.length === 0)
              return { declined: Status.declineOf(executed.state) ?? "compaction-pending" } satisfies Compacted
          }
          const settled = yield* settle(sessionId, settings)
          yield* probed(sessionId, settled)
          return { outcome: settled.outcome } satisfies Compacted
        }),
      )
    })

    const prune = Traced.fn("ContextManager.prune")(function* (sessionId: string) {
      const settings = yield* settingsFor(sessionId)
      return (yield* runner.afterStep(sessionId, settings)) satisfies Pruned
    })

    const fork = Traced.fn("ContextManager.fork")(function* (
      sessionId: string,
      forkOptions: { readonly into: string; readonly at?: number | undefined },
    ) {
      yield* settingsFor(sessionId)
      yield* settingsFor(forkOptions.into)
      return yield* sessions.fork(sessionId, forkOptions.into, forkOptions.at)
    })

    const usage = Traced.fn("ContextManager.usage")(function* (sessionId: string) {
      const settings = yield* settingsFor(sessionId)
      return usageOf(sessionId, yield* sessions.load(sessionId), settings)
    })

    const transcript = Traced.fn("ContextManager.transcript")(function* (sessionId: string) {
      yield* settingsFor(sessionId)
      const state = yield* sessions.history(sessionId)
      return Conversation.messages(state.session.window.conversation)
    })

    const recallIn = Recall.make(sessions, readModels?.recall, { ...recallOptions, redactSecrets })
    const recall = Traced.fn("ContextManager.recall")(function* (sessionId: string, request: Recall.Request) {
      yield* settingsFor(sessionId)
      return yield* recallIn(sessionId, request)
    })

    const pinOps = PinOps.make(sessions)
    const pin = Traced.fn("ContextManager.pin")(function* (
      sessionId: string,
      target: PinOps.Target,
      by: PinOps.Actor = "user",
    ) {
      const settings = yield* settingsFor(sessionId)
      return yield* pinOps.pin(sessionId, target, by, settings.config, settings.model.limits)
    })
    const unpin = Traced.fn("ContextManager.unpin")(function* (
      sessionId: string,
      target: PinOps.Target,
      by: PinOps.Actor = "user",
    ) {
      yield* settingsFor(sessionId)
      return yield* pinOps.unpin(sessionId, target, by)
    })
    const pins = Traced.fn("ContextManager.pins")(function* (sessionId: string) {
      const settings = yield* settingsFor(sessionId)
      return PinOps.listOf(yield* sessions.load(sessionId), settings.config, settings.model.limits)
    })

    return {
      pin,
      unpin,
      pins,
      recall,
      start,
      recordUserMessage,
      recordAssistantStep,
      recordToolResult,
      reportProviderError,
      prepare,
      compact,
      prune,
      usage,
      transcript,
      fork,
    } satisfies ContextManagerShape
  })

const checkSpec = (spec: ModelSpec, config: CoreConfig.CompactionConfig) => {
  const checked = checkLimits(spec.ref, spec.limits, config)
  return Result.isFailure(checked) ? Effect.fail(checked.failure) : Effect.void
}
