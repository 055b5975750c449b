/**
 * Runs a session's strategy (`Strategy.Strategy`, core): builds what it sees from the session's state, the clock and
 * the provider cache, asks it before a call, after a step and when a compaction starts, and turns its decisions into
 * the Decider's commands (`Prune`, `CreateCompaction`). It decides nothing itself.
 */
import {
  type CacheEconomy,
  type Commands,
  type Ids,
  type Message,
  Pricing,
  type Prune,
  PruneScan,
  Session,
  Strategy,
  type Window,
} from "@pivot/core"
import { Clock, Effect, Result } from "effect"
import type * as Compaction from "./Compaction.ts"
import { type ModelSpec, priceFor } from "./Config.ts"
import type * as RuntimeEvents from "./RuntimeEvents.ts"
import * as RuntimeState from "./RuntimeState.ts"
import type { Command, ExecuteError, SessionsShape, State } from "./Sessions.ts"

/** What the runner needs from the context manager. */
export interface Options {
  readonly sessions: SessionsShape
  readonly ids: Ids.Ids["Service"]
  readonly strategy: Strategy.Strategy
  /** The application's prune thresholds (`ContextManager` option `prune`). */
  readonly prune: Prune.Options
  /** Most automatic compactions in a row without progress. */
  readonly limit: number
  /** The session's visible messages (the context manager keeps them up to date incrementally). */
  readonly visibleOf: (sessionId: string, window: Window.State) => ReadonlyArray<Message.Message>
}

/** A prune's result. */
export interface Pruned {
  readonly parts: number
  readonly tokens: number
}

/** The runner of one strategy for every session of a context manager. */
export interface Runner {
  /**
   * The cache multipliers of a model: its own price's (`ModelSpec.price`), else the catalog's, else its provider's;
   * undefined for none (`Pricing.FLAT`).
   */
  readonly ratesOf: (model: ModelSpec) => CacheEconomy.Multipliers | undefined
  /** What the strategy sees of a session's state at `now`. */
  readonly inputOf: (sessionId: string, state: State, settings: Compaction.Settings, now: number) => Strategy.Input
  /** Before a model call: why the strategy would compact, when its decision is to compact (read, not executed). */
  readonly compactsBeforeCall: (
    sessionId: string,
    state: State,
    settings: Compaction.Settings,
    now: number,
  ) => "threshold" | "rent-or-buy" | undefined
  /** Before a model call: the strategy's decision, executed. */
  readonly beforeCall: (sessionId: string, settings: Compaction.Settings) => Effect.Effect<void, ExecuteError>
  /** After a step: the strategy's decision, executed; the outputs it cleared. */
  readonly afterStep: (sessionId: string, settings: Compaction.Settings) => Effect.Effect<Pruned, ExecuteError>
  /** The settings a compaction starts with: what the strategy keeps of the turn in progress. */
  readonly forCompaction: (sessionId: string, settings: Compaction.Settings) => Effect.Effect<Compaction.Settings>
  /**
   * The hard limit under every strategy: `command` decided, and when the Decider reports an overflow, an automatic
   * compaction in the same batch (or the record that the no-progress bound stopped it). `replay`: the overflowing
   * turn is sent again after the summary (a provider refused it before any output).
   */
  readonly withCompaction: (
    command: Commands.Command,
    at: number,
    markerId: Ids.MessageId,
    partId: Ids.PartId,
    replay: boolean,
  ) => (state: State) => ReadonlyArray<Command>
}

/** The runner of one strategy for every session of a context manager. */
export const make = (options: Options): Runner => {
  const { sessions, ids, strategy, limit } = options
  const ttl = strategy.ttl ?? Strategy.DEFAULT_TTL

  // The rates of each model, looked up once (the catalog is not read again on every prepare); a spec naming its own
  // price (`ModelSpec.price`) is priced by it. A model with neither a price nor known provider multipliers gets none:
  // nothing says compacting would pay.
  const ratesByModel = new Map<string, CacheEconomy.Multipliers | undefined>()
  const ratesOf = (spec: ModelSpec): CacheEconomy.Multipliers | undefined => {
    const { ref, price } = spec
    const key = `${ref.providerId}/${ref.modelId}${price === undefined ? "" : `@${JSON.stringify(price)}`}`
    if (!ratesByModel.has(key)) {
      const found = Pricing.ratesFor(ref, priceFor(spec))
      ratesByModel.set(key, found === Pricing.FLAT ? undefined : found)
    }
    return ratesByModel.get(key)
  }

  /** What the strategy sees of `state` at `now`. */
  const inputOf = (sessionId: string, state: State, settings: Compaction.Settings, now: number): Strategy.Input => {
    const last = state.session.lastFinished
    // The window's messages are read only by a strategy that looks at them (OpenCode's prune does not).
    let messages: ReadonlyArray<Message.Message> | undefined
    return {
      get messages() {
        messages ??= options.visibleOf(sessionId, state.session.window)
        return messages
      },
      now,
      cache: Strategy.cacheAt(last === undefined ? undefined : Session.message(state.session, last), now, ttl),
      config: settings.config,
      limits: settings.model.limits,
      compactionLimits: settings.compactionModel.limits,
      prune: options.prune,
      rates: ratesOf(settings.model),
      mayCompact: state.session.pending === undefined && RuntimeState.mayAutoCompact(state.runtime, options.limit),
      fixed: state.runtime.fixed.tokens,
    }
  }

  /** An automatic compaction for `reason`, with the agent and model of the turn's user message. */
  const compactionOf = (
    state: State,
    at: number,
    markerId: Ids.MessageId,
    partId: Ids.PartId,
    reason: "threshold" | "rent-or-buy",
  ): Command => {
    const last = state.runtime.lastUserId
    const parent = last === undefined ? undefined : Session.message(state.session, last)
    return {
      _tag: "CreateCompaction",
      at,
      markerId,
      partId,
      auto: true,
      reason,
      ...(parent?.role === "user" && parent.agent !== undefined ? { agent: parent.agent } : {}),
      ...(parent?.role === "user" && parent.model !== undefined ? { model: parent.model } : {}),
    }
  }

  /**
   * Decides `command` and, when it reports an overflow that should be compacted, asks for an automatic compaction in
   * the same batch — or records that the bound stopped it — so no overflow is left without its consequence.
   */
  const withCompaction = (
    command: Commands.Command,
    at: number,
    markerId: Ids.MessageId,
    partId: Ids.PartId,
    replay: boolean,
  ) => {
    return (state: State): ReadonlyArray<Command> => {
      const decided = Session.decide(command, state.session)
      if (Result.isFailure(decided)) return [command]
      const overflow = decided.success.find((e) => e._tag === "OverflowDetected")
      if (overflow === undefined || overflow._tag !== "OverflowDetected") return [command]
      const after = RuntimeState.fold(decided.success, state.runtime)
      return [command, autoCompaction(state, after, at, overflow, markerId, partId, replay)]
    }
  }

  const autoCompaction = (
    state: State,
    after: RuntimeState.State,
    at: number,
    overflow: {
      readonly messageId: Ids.MessageId
      readonly tokens: number
      readonly trigger?: number
      readonly source: "usage" | "provider-error" | "pre-check"
    },
    markerId: Ids.MessageId,
    partId: Ids.PartId,
    replay: boolean,
  ): Command => {
    if (!RuntimeState.mayAutoCompact(after, limit)) {
      if (after.suspended) return { _tag: "Record", events: [] }
      const abandoned: RuntimeEvents.Event = {
        _tag: "CompactionAbandoned",
        at,
        messageId: overflow.messageId,
        attempts: after.streak,
        limit,
        tokens: overflow.tokens,
        ...(overflow.trigger === undefined ? {} : { trigger: overflow.trigger }),
      }
      return { _tag: "Record", events: [abandoned] }
    }
    const parent = after.lastUserId === undefined ? undefined : Session.message(state.session, after.lastUserId)
    return {
      _tag: "CreateCompaction",
      at,
      markerId,
      partId,
      auto: true,
      ...(replay ? { overflow: true } : {}),
      reason: overflow.source === "provider-error" ? "provider-overflow" : "threshold",
      ...(parent?.role === "user" && parent.agent !== undefined ? { agent: parent.agent } : {}),
      ...(parent?.role === "user" && parent.model !== undefined ? { model: parent.model } : {}),
    }
  }

  /**
   * Executes a decision taken by `ask` on `state`: a prune as its commands, a compaction re-judged on the state it is
   * recorded on (another writer may have changed the session meanwhile). Answers the outputs cleared.
   */
  const execute = (
    sessionId: string,
    settings: Compaction.Settings,
    at: number,
    decision: Strategy.Decision,
    ask: (input: Strategy.Input) => Strategy.Decision,
  ) =>
    Effect.gen(function* () {
      if (decision._tag === "Nothing") return { parts: 0, tokens: 0 } satisfies Pruned
      if (decision._tag === "Compact") {
        const markerId = yield* ids.message
        const partId = yield* ids.part
        yield* sessions.execute(sessionId, (current) => {
          const again = ask(inputOf(sessionId, current, settings, at))
          return again._tag === "Compact" ? [compactionOf(current, at, markerId, partId, again.reason)] : []
        })
        return { parts: 0, tokens: 0 } satisfies Pruned
      }
      const executed = yield* sessions.execute(sessionId, Strategy.pruneCommands(decision, at))
      let tokens = 0
      let parts = 0
      for (const e of executed.events)
        if (e._tag === "PartCompacted") {
          parts++
          tokens += e.tokens
        }
      return { parts, tokens } satisfies Pruned
    })

  /** Before a model call: the strategy's decision (a cold-cache prune, a compaction that pays, …), executed. */
  const beforeCall = (sessionId: string, settings: Compaction.Settings) => {
    const ask = strategy.beforeCall
    if (ask === undefined) return Effect.void
    return Effect.gen(function* () {
      const at = yield* Clock.currentTimeMillis
      const state = yield* sessions.load(sessionId)
      if (state.session.sessionId === undefined) return
      yield* execute(sessionId, settings, at, ask(inputOf(sessionId, state, settings, at)), ask)
    })
  }

  const compactsBeforeCall = (sessionId: string, state: State, settings: Compaction.Settings, now: number) => {
    if (state.session.sessionId === undefined) return undefined
    const decision = strategy.beforeCall?.(inputOf(sessionId, state, settings, now))
    return decision?._tag === "Compact" ? decision.reason : undefined
  }

  // Each session's prune walk kept up to date (issue 23): a turn reads only the messages it added.
  const scanners = new Map<string, PruneScan.Scanner>()
  const scannerOf = (sessionId: string) => {
    let scanner = scanners.get(sessionId)
    if (scanner === undefined) {
      scanner = PruneScan.make()
      if (scanners.size >= 1_000) scanners.delete(scanners.keys().next().value!)
    } else scanners.delete(sessionId)
    scanners.set(sessionId, scanner)
    return scanner
  }

  /** After a step (the application's `prune`): the strategy's decision, executed; the outputs it cleared. */
  const afterStep = (sessionId: string, settings: Compaction.Settings) => {
    const ask = strategy.afterStep
    if (ask === undefined) return Effect.succeed({ parts: 0, tokens: 0 } satisfies Pruned)
    return Effect.gen(function* () {
      const at = yield* Clock.currentTimeMillis
      const state = yield* sessions.load(sessionId)
      const decision = ask(inputOf(sessionId, state, settings, at))
      if (decision._tag === "Nothing") return { parts: 0, tokens: 0 } satisfies Pruned
      // Most turns have nothing to prune: OpenCode's walk is decided on the state in hand, without the command's
      // decode and the session's lock, by the session's scanner, which reads only the messages added since its last
      // walk. A prune that would record goes through `execute`, which decides again.
      if (decision._tag === "Prune" && decision.parts.length === 0 && state.session.sessionId !== undefined) {
        const [walk] = Strategy.pruneCommands(decision, at)
        if (
          walk?._tag === "Prune" &&
          scannerOf(sessionId).select(state.session.window.conversation, walk).parts.length === 0
        )
          return { parts: 0, tokens: 0 } satisfies Pruned
      }
      return yield* execute(sessionId, settings, at, decision, ask)
    })
  }

  /** The settings a compaction starts with: the strategy's `keep` asked on the state it starts from. */
  const forCompaction = (sessionId: string, settings: Compaction.Settings) => {
    const keep = strategy.keep
    if (keep === undefined) return Effect.succeed(settings)
    return Effect.map(
      Clock.currentTimeMillis,
      (now): Compaction.Settings => ({
        ...settings,
        keep: (state) => keep(inputOf(sessionId, state, settings, now))?.ids,
      }),
    )
  }

  return { inputOf, compactsBeforeCall, beforeCall, afterStep, forCompaction, withCompaction, ratesOf }
}
