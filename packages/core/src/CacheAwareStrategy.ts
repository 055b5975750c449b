/**
 * Cache-aware compaction as a strategy (ADR 0017, ADR 0026 for the working set, ADR 0034 for the trigger): compact
 * earlier (threshold 0.75 of the room above the fixed prompt — system prompt and tools, measured from the session's
 * first call) with a cache-safe summariser request and no tail of old turns; compact before a call as soon as it pays
 * (`CacheEconomy.due`, the rent-or-buy rule) on a warm cache; prune in batches on a warm cache, and down to the
 * current turn before a call on a cold one (its prefix is written again anyway). The compactions it chooses itself
 * (rent-or-buy, and the threshold a turn is expected to reach) wait for a turn's start, when only the new request is
 * kept verbatim and written again after the summary. It never drops the working set: a compaction while a turn is in
 * progress (the hard limit) keeps that turn — the request that opened it and everything it read since — verbatim in
 * the kept tail, or its request and newest messages when the whole turn is larger than `KEEP_SHARE` of the usable
 * window.
 */
import * as CacheEconomy from "./CacheEconomy.ts"
import type { CompactionConfig } from "./Config.ts"
import { compactionPartOf, isMarker, type Message } from "./Message.ts"
import { reaches, trigger, usable } from "./Overflow.ts"
import * as Prune from "./Prune.ts"
import { type Decision, type Input, type Keep, nothing, type Strategy } from "./Strategy.ts"
import { sizeOf, tailBudget, turns } from "./Tail.ts"

/**
 * Cache-aware's default compaction threshold: the share of the room above the fixed prompt (system prompt and tools)
 * the conversation may fill, leaving room for the summariser's request and answer (ADR 0034).
 */
export const THRESHOLD = 0.75

/** Cache-aware's default tail budget of old turns: none (the turn in progress is kept by `keep`). */
export const TAIL = 0

/** The newest user turns whose outputs the cold prune keeps by default (the current one). */
export const COLD_TURNS = 1

/** The default prune batch, as a multiple of the prune minimum (40,000 with OpenCode's 20,000). */
export const BATCH = 2

/** The largest share of the usable window a kept turn may take: past it, keeping it would leave no room to work. */
export const KEEP_SHARE = 0.5

/** Cache-aware's settings (the runtime's `cacheAware` option, its TTL in ms). */
export interface Settings {
  /** The conversation's system prompt, which the summariser request starts with. */
  readonly system?: string | undefined
  /** Prune only when it frees more than this many tokens on a warm cache; default `BATCH` × the prune minimum. */
  readonly batch?: number | undefined
  /** The provider cache's time to live in ms; default 5 minutes. */
  readonly ttl?: number | undefined
  /** On a cold cache, old outputs are cleared down to this many newest output tokens; default 0. */
  readonly coldProtect?: number | undefined
  /** The newest user turns whose outputs the cold prune keeps; default `COLD_TURNS`. */
  readonly coldTurns?: number | undefined
  /** Compact when it pays (`CacheEconomy.due`); default true. */
  readonly rentOrBuy?: boolean | undefined
  /**
   * The multipliers rent-or-buy and the summariser request form (`CacheEconomy.cacheSafePays`, ADR 0047) price with;
   * default the session model's (`Input.rates`).
   */
  readonly rates?: CacheEconomy.Multipliers | undefined
}

/** The settings cache-aware compacts with: threshold `THRESHOLD` and tail `TAIL` unless the config sets them. */
export const configure = (config: CompactionConfig): CompactionConfig => ({
  ...config,
  threshold: config.threshold ?? THRESHOLD,
  preserve_recent_tokens: config.preserve_recent_tokens ?? TAIL,
})

/** Whether a message is a user's request (not a compaction marker, nor a synthetic continue message). */
export const isRequest = (message: Message): boolean =>
  message.role === "user" &&
  compactionPartOf(message) === undefined &&
  message.parts.some(
    (part) =>
      (part.type === "text" && part.synthetic !== true && part.ignored !== true && part.text.trim() !== "") ||
      part.type === "file" ||
      part.type === "subtask",
  )

/**
 * The turn in progress: from the newest request to the end, when the assistant has not finished answering it (no
 * step since it, or the newest step asked for tools or was cut off). Undefined between turns.
 */
export const turnInProgress = (
  messages: ReadonlyArray<Message>,
): { readonly start: number; readonly messages: ReadonlyArray<Message> } | undefined => {
  const start = messages.findLastIndex(isRequest)
  if (start === -1) return undefined
  const last = messages.findLast(
    (m, i) => i >= start && m.role === "assistant" && m.summary !== true && m.finish !== undefined,
  )
  if (last?.role === "assistant" && !UNFINISHED.has(last.finish!)) return undefined
  return { start, messages: messages.slice(start) }
}

const UNFINISHED = new Set(["tool-calls", "tool_calls", "tool_use", "length", "max_tokens", "unknown"])

/** Whether a turn has just started: the newest request has no model step after it yet. */
export const atTurnStart = (messages: ReadonlyArray<Message>): boolean => {
  const start = messages.findLastIndex(isRequest)
  return start !== -1 && !messages.slice(start + 1).some((m) => m.role === "assistant")
}

/**
 * How far a finished turn took the window, in the two places where it would force a compaction that a compaction at
 * its start spares (ADR 0041). `checked`: what it added before its second-to-last call — the last call whose usage
 * the hard limit checks within the turn (before the next call); what the last call reports is checked at the next
 * turn's start, where a compaction keeps only the new request anyway. 0 for a turn of one call: no check falls inside
 * it. `sent`: what it added before its last call — that call's prompt, which must fit the usable window (a provider
 * refuses a prompt that leaves the call less than its output allowance).
 */
export const reachOf = (turn: ReadonlyArray<Message>): { readonly checked: number; readonly sent: number } => {
  const calls = turn.flatMap((m, i) => (m.role === "assistant" && m.summary !== true ? [i] : []))
  const last = calls.at(-1)
  if (last === undefined) return { checked: 0, sent: sizeOf(turn) }
  const before = calls.at(-2)
  return { checked: before === undefined ? 0 : sizeOf(turn.slice(0, before)), sent: sizeOf(turn.slice(0, last)) }
}

/**
 * Whether compacting now, at a turn's start, is expected to spare a compaction in the middle of the turn (which keeps
 * the turn verbatim, so the next call writes it again: ADR 0034) — the one reason besides rent-or-buy to compact
 * before the hard limit (ADR 0041). With the largest `reachOf` the turns finished since the latest summary: the window
 * now (the fixed prompt and the messages) plus the largest `checked` reaches the trigger (`Overflow.trigger`, above
 * the fixed prompt), or plus the largest `sent` goes over the usable window — and after a compaction (the fixed prompt
 * and a summary, `CacheEconomy.DEFAULT_SUMMARY_TOKENS`) the same turn would not: a turn that forces one in its middle
 * either way is compacted there anyway, so compacting at its start too would only add one. A turn that reaches the
 * trigger only with its last call forces nothing in its middle: the hard limit compacts at the next turn's start, at
 * the same cost, having shed more. The largest turn, not the mean: a compaction one turn early costs the room a
 * turn would have used, one in the middle of a turn re-writes the turn. False when no turn has finished since, or
 * automatic compaction is off.
 */
export const reachesThisTurn = (input: Input): boolean => {
  const from = input.messages.findLastIndex((m) => m.role === "assistant" && m.summary === true) + 1
  const recent = input.messages.slice(from)
  const all = turns(recent)
  const finished = atTurnStart(recent) ? all.slice(0, -1) : all
  if (finished.length === 0) return false
  const reach = finished.map((t) => reachOf(recent.slice(t.start, t.end)))
  const checked = Math.max(...reach.map((r) => r.checked))
  const sent = Math.max(...reach.map((r) => r.sent))
  const fixed = input.fixed ?? 0
  const at = trigger(input.config, input.limits, input.config.output_token_max, fixed)
  const room = usable(input.config, input.limits, input.config.output_token_max)
  if (at === undefined) return false
  const forces = (window: number) => reaches(window + checked, at) || window + sent > room
  return forces(fixed + sizeOf(input.messages)) && !forces(fixed + CacheEconomy.DEFAULT_SUMMARY_TOKENS)
}

/**
 * What a compaction keeps of the turn in progress (see the module's summary). The whole turn — its request and every
 * message since, continue messages of earlier pivots included — when it fits `KEEP_SHARE` of the usable window and
 * something older is left to summarise; otherwise its request and the newest of its messages that fit that share
 * with it (the middle of the turn is summarised). Undefined between turns, or when not even the request fits.
 */
export const keepOf = (input: Input): Keep | undefined => {
  const turn = turnInProgress(input.messages)
  if (turn === undefined) return undefined
  const own = turn.messages.filter((m) => !isMarker(m) && !(m.role === "assistant" && m.summary === true))
  const cap = Math.floor(usable(input.config, input.limits, input.config.output_token_max) * KEEP_SHARE)
  const older = input.messages
    .slice(0, turn.start)
    .some((m) => !isMarker(m) && !(m.role === "assistant" && m.summary === true))
  if (older && sizeOf(own) <= cap) return { ids: own.map((m) => m.id), whole: true }
  const [request, ...rest] = own
  if (request === undefined || sizeOf([request]) > cap) return undefined
  // The newest messages that fit beside the request (the size grows as `from` falls: a binary search), leaving at
  // least one of the turn's to summarise.
  let low = 1
  let high = rest.length
  while (low < high) {
    const mid = Math.floor((low + high) / 2)
    if (sizeOf([request, ...rest.slice(mid)]) <= cap) high = mid
    else low = mid + 1
  }
  const from = Math.max(1, high)
  return { ids: [request.id, ...rest.slice(from).map((m) => m.id)], whole: false }
}

/** The cold prune: before a call on a cold cache, old outputs down to `coldProtect` tokens and `coldTurns` turns. */
const coldPrune = (settings: Settings, input: Input): Decision => ({
  _tag: "Prune",
  walk: {
    protect: settings.coldProtect ?? 0,
    minimum: 0,
    turns: settings.coldTurns ?? COLD_TURNS,
    ...(input.prune.protectedTools === undefined ? {} : { protectedTools: input.prune.protectedTools }),
    rule: "cold-cache",
    reason: `the cache is cold (last call ${input.now - (input.cache.lastCallAt ?? input.now)} ms ago, TTL ${input.cache.ttl} ms): the prefix is written again anyway`,
  },
  parts: [],
})

/** Whether rent-or-buy says to compact now: on a warm cache, once the rent paid reaches the buy. */
export const pays = (settings: Settings, input: Input): boolean => {
  if (settings.rentOrBuy === false || input.config.auto === false || !input.mayCompact || input.cache.cold) return false
  const rates = settings.rates ?? input.rates
  if (rates === undefined) return false
  const kept = input.config.tail_turns === 0 ? 0 : tailBudget(input.config, input.compactionLimits)
  return CacheEconomy.due(
    CacheEconomy.segmentOf(input.messages, { ttl: input.cache.ttl, kept, fixed: input.fixed }),
    rates,
  )
}

/** Cache-aware with these settings. */
export const make = (settings: Settings = {}): Strategy => ({
  name: "cache-aware",
  configure,
  thresholdOf: "conversation",
  form: "cache-safe",
  ...(settings.system === undefined ? {} : { system: settings.system }),
  ...(settings.ttl === undefined ? {} : { ttl: settings.ttl }),
  ...(settings.rates === undefined ? {} : { rates: settings.rates }),
  batched: true,
  beforeCall: (input) => {
    if (Prune.isEnabled(input.config) && input.cache.lastCallAt !== undefined && input.cache.cold)
      return coldPrune(settings, input)
    // Only at a turn's start (a new request no step has answered yet: ADR 0047). During a turn a compaction would
    // keep the turn verbatim and the next call would write it again; after a finished step with no new request, the
    // call continues that turn (an application's or host's continuation) and a compaction would keep none of it — the
    // turn's reads are then read again. The hard limit still compacts anywhere, keeping the working set.
    if (!atTurnStart(input.messages)) return nothing
    if (pays(settings, input)) return { _tag: "Compact", reason: "rent-or-buy" }
    if (input.mayCompact && reachesThisTurn(input)) return { _tag: "Compact", reason: "threshold" }
    return nothing
  },
  afterStep: (input) => {
    if (!Prune.isEnabled(input.config)) return nothing
    const minimum =
      input.cache.cold || input.cache.atPivot
        ? 0
        : (settings.batch ?? BATCH * (input.prune.minimum ?? Prune.PRUNE_MINIMUM))
    return {
      _tag: "Prune",
      walk: {
        ...(input.prune.protect === undefined ? {} : { protect: input.prune.protect }),
        minimum,
        ...(input.prune.protectedTools === undefined ? {} : { protectedTools: input.prune.protectedTools }),
      },
      parts: [],
    }
  },
  keep: keepOf,
})

/** Cache-aware with its defaults (the `cacheAware: true` of the runtime, without a system prompt). */
export const strategy: Strategy = make()
