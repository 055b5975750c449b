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
  type Commands,
  Conversation,
  Ids,
  type Message,
  type ModelMessage,
  Prompt,
  Render,
  Session,
  Strategy,
  Tokens,
  Traced,
  ValidWindow,
  Window,
} from "@pivot/core"
import { type EventStore, ReadModels } from "@pivot/store"
import { Clock, Context, Effect, Layer, Option, Result, Semaphore } from "effect"
import * as Compaction from "./Compaction.ts"
import { type ImpossibleLimits, type ModelSpec, priceOf } from "./Config.ts"
import * as Hud from "./Hud.ts"
import { Judge } from "./Judge.ts"
import * as LiveLedger from "./LiveLedger.ts"
import * as ManualCompaction from "./ManualCompaction.ts"
import * as PinOps from "./Pins.ts"
import * as Plugins from "./Plugins.ts"
import * as Probes from "./Probes.ts"
import * as Recall from "./Recall.ts"
import * as Recording from "./Recording.ts"
import * as SessionSettings from "./SessionSettings.ts"
import { Sessions, type State } from "./Sessions.ts"
import * as Status from "./Status.ts"
import * as StrategyRunner from "./StrategyRunner.ts"
import { Summarizer } from "./Summarizer.ts"
import * as WindowCache from "./WindowCache.ts"

/** Whether a decision records nothing. */
const isNoOp = (decided: ReturnType<typeof Session.decide>): boolean =>
  Result.isSuccess(decided) && decided.success.length === 0

export * from "./ContextManagerTypes.ts"

import type {
  Compacted,
  CompactionDue,
  CompactRequest,
  ContextManagerShape,
  InvalidOption,
  InvalidToolKind,
  Options,
  Prepared,
  Pruned,
  Usage,
} from "./ContextManagerTypes.ts"
import { checkOptions, checkToolKinds } from "./internal/checkOptions.ts"

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

/** The strategy `options` ask for (its one home is `SessionSettings`; named here too, as before). */
export const strategyOf = SessionSettings.strategyOf

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
    const strategy = SessionSettings.strategyOf(options)
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
    // The models checked against the strategy's config; a session's overrides are checked when it is used.
    const { settingsFor } = yield* SessionSettings.make(options, strategy)

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
          ? {
              cacheAware: {
                system: strategy.system ?? Prompt.SYSTEM_PROMPT,
                render: renderOptions,
                // The request form is priced at the strategy's rates, else the session model's (ADR 0047).
                rates: (model: ModelSpec) => strategy.rates ?? runner.ratesOf(model),
                ttl: strategy.ttl ?? Strategy.DEFAULT_TTL,
              },
            }
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

    const usageOf = (sessionId: string, state: State, settings: Compaction.Settings): Usage =>
      Status.usageOf(state, settings, warnAt, () => estimateWindow(sessionId, state) + (options.overheadTokens ?? 0))

    /** `Tokens.estimateWindow` of the rendered window, from the session's renderer (nothing rendered twice). */
    const estimateWindow = (sessionId: string, state: State) => {
      const rendered = renderedOf(sessionId, state.session.window, Window.messages)
      return Tokens.estimateWindowLength(rendered.length, rendererOf(sessionId).jsonLength(rendered))
    }

    // Each session's window rendered incrementally, its visible messages and renderings kept (issue 23).
    const { rendererOf, visibleOf, renderedOf } = WindowCache.make(renderOptions)
    // The strategy, asked before each call, after each step and when a compaction starts.
    const runner = StrategyRunner.make({ sessions, ids, strategy, prune: options.prune ?? {}, limit, visibleOf })
    // What happens in a turn, recorded (the strategy asked after each step whether it compacts).
    const { start, recordUserMessage, recordAssistantStep, recordToolResult, reportProviderError } = Recording.make({
      sessions,
      ids,
      options,
      settingsFor,
      runner,
    })
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

    const overflowCheck = (settings: Compaction.Settings, at: number, state: State): Commands.Command => ({
      _tag: "CheckOverflow",
      at,
      config: settings.config,
      limits: settings.model.limits,
      ...Status.withFixed(Status.fixedOf(state, settings)),
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
          const check = overflowCheck(settings, yield* Clock.currentTimeMillis, state)
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
          const check = overflowCheck(settings, at, state)
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

    const compactionDue = Traced.fn("ContextManager.compactionDue")(function* (sessionId: string) {
      const settings = yield* settingsFor(sessionId)
      const at = yield* Clock.currentTimeMillis
      const state = yield* sessions.load(sessionId)
      // The two ways `prepare` compacts before a call: the strategy's own decision, else the overflow check.
      const reason =
        runner.compactsBeforeCall(sessionId, state, settings, at) ??
        (overflowsIn(state, overflowCheck(settings, at, state)) ? "threshold" : undefined)
      const estimated = state.session.sessionId === undefined ? 0 : estimateWindow(sessionId, state)
      return { reason, usage: usageOf(sessionId, state, settings), estimated } satisfies CompactionDue
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
      compactionDue,
      usage,
      transcript,
      fork,
    } satisfies ContextManagerShape
  })
