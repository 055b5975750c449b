/**
 * A context strategy as a value: pure functions from what a session looks like now (its window, the clock, the
 * provider cache's state, the settings in force) to a decision — prune these outputs (each with its rule and reason),
 * compact now, or nothing — plus the settings its compactions run with (threshold, kept tail, request form). The
 * runtime asks it before each model call and after each step, and turns its answer into commands; it never decides
 * anything itself. Built in: `OpenCodeStrategy` (OpenCode 1.17 / 1.18), `CacheAwareStrategy` (ADR 0017), and the
 * zero-cost prune rules of `PruneRules`, composed onto any strategy with `withRules`. docs/strategies.md.
 *
 * **Example**
 * ```ts
 * // Clear every output of a `bash` call older than the newest turn, and otherwise behave as OpenCode 1.18.
 * const noOldBash: Strategy.Rule = {
 *   name: "old-bash",
 *   select: (input) => Strategy.outputs(input.messages, { before: 1 }).flatMap((o) =>
 *     o.tool === "bash" ? [{ messageId: o.messageId, partId: o.partId, rule: "old-bash", reason: "an old command" }] : []),
 * }
 * const strategy = Strategy.withRules(OpenCodeStrategy.v1_18, noOldBash)
 * ```
 */
import type { Multipliers } from "./CacheEconomy.ts"
import type { Command, PruneTarget } from "./Commands.ts"
import type { CompactionConfig } from "./Config.ts"
import type { MessageId, PartId } from "./Ids.ts"
import type { Message, ToolPart } from "./Message.ts"
import type { ModelLimits } from "./Model.ts"
import * as Prune from "./Prune.ts"
import { turns } from "./Tail.ts"

/** The provider's prompt cache as the runtime sees it before a call. */
export interface Cache {
  /** When the newest finished message ended (ms); undefined before the first. */
  readonly lastCallAt: number | undefined
  /** The cache's time to live in ms (the strategy's `ttl`, else `DEFAULT_TTL`). */
  readonly ttl: number
  /** No finished message yet, or the newest one is older than `ttl`: the next call writes its whole prefix. */
  readonly cold: boolean
  /** The newest finished message is a summary: the next call writes its prefix anew anyway. */
  readonly atPivot: boolean
}

/** The provider cache's time to live when a strategy names none: 5 minutes (Anthropic's and OpenAI's default). */
export const DEFAULT_TTL = 5 * 60 * 1000

/** The cache at `now`, from the newest finished message (`Session.State.lastFinished`) and the TTL in ms. */
export const cacheAt = (lastFinished: Message | undefined, now: number, ttl: number): Cache => {
  const lastCallAt =
    lastFinished === undefined
      ? undefined
      : lastFinished.role === "assistant"
        ? (lastFinished.completedAt ?? lastFinished.createdAt)
        : lastFinished.createdAt
  return {
    lastCallAt,
    ttl,
    cold: lastCallAt === undefined || now - lastCallAt > ttl,
    atPivot: lastFinished?.role === "assistant" && lastFinished.summary === true,
  }
}

/** What a strategy sees. Everything is a value recorded in the log or given by the settings: deciding is pure. */
export interface Input {
  /** The window's messages as the model sees them, oldest first (summary and kept tail included, markers too). */
  readonly messages: ReadonlyArray<Message>
  /** The clock (ms). */
  readonly now: number
  readonly cache: Cache
  /** The compaction settings in force (after the strategy's `configure`). */
  readonly config: CompactionConfig
  /** The session model's limits and the summariser's. */
  readonly limits: ModelLimits
  readonly compactionLimits: ModelLimits
  /** The prune thresholds the application gave (`ContextManager` option `prune`); OpenCode's constants when empty. */
  readonly prune: Prune.Options
  /** What a token of each kind costs for the session model, when known (for rent-or-buy). */
  readonly rates: Multipliers | undefined
  /** Whether an automatic compaction may start now: none is pending and the no-progress bound is not reached. */
  readonly mayCompact: boolean
  /**
   * The fixed prompt's tokens (system prompt and tools) once the session's first call measured them (`FixedPrompt`);
   * undefined before, or where the runtime does not measure it.
   */
  readonly fixed?: number | undefined
}

/** OpenCode's prune walk (spec §2.14) with these thresholds, recorded with `rule` and `reason` when given. */
export interface Walk extends Prune.Options {
  readonly rule?: string | undefined
  readonly reason?: string | undefined
}

/** What to do now. */
export type Decision =
  | { readonly _tag: "Nothing" }
  | {
      readonly _tag: "Prune"
      /** OpenCode's walk, chosen by the Decider on the state it is recorded on. */
      readonly walk?: Walk | undefined
      /** Outputs chosen by rules; cleared after the walk's. */
      readonly parts: ReadonlyArray<PruneTarget>
    }
  | { readonly _tag: "Compact"; readonly reason: "threshold" | "rent-or-buy" }

/**
 * What a compaction keeps verbatim besides the config's tail: these window messages move from the summarised head to
 * the kept tail (in window order), unless that would leave nothing to summarise. `whole`: the keep is the entire turn
 * in progress (not its request and newest messages only).
 */
export interface Keep {
  readonly ids: ReadonlyArray<MessageId>
  readonly whole: boolean
}

/** A context strategy. Every member is optional but `name`: an empty strategy never prunes and never compacts early. */
export interface Strategy {
  /** Its name in docs, logs and comparisons (`opencode-1.18`, `cache-aware`, `mine+duplicate-calls`, …). */
  readonly name: string
  /** The compaction settings it runs with, laid over the application's (e.g. a lower threshold). Default: as given. */
  readonly configure?: ((config: CompactionConfig) => CompactionConfig) | undefined
  /**
   * The summariser request: `opencode` (OpenCode's own: the head and the prompt) or `cache-safe` (the conversation's
   * own prompt with the compaction prompt appended, so the provider's cache serves the window). Default `opencode`.
   */
  readonly form?: "opencode" | "cache-safe" | undefined
  /** The conversation's system prompt, which a `cache-safe` request starts with. */
  readonly system?: string | undefined
  /**
   * The cache multipliers its choices are priced with (read, write, output in input tokens); default the session
   * model's. A `cache-safe` request is sent only when it costs no more than OpenCode's at these rates
   * (`CacheEconomy.cacheSafePays`, ADR 0047); with none known, always.
   */
  readonly rates?: Multipliers | undefined
  /**
   * What the config's `threshold` is a share of: `usable`, the whole usable window (default), or `conversation`, the
   * room above the fixed prompt — system prompt and tools, measured from the session's first call (`FixedPrompt`,
   * `Overflow.trigger`; ADR 0034). Cache-aware's is `conversation`.
   */
  readonly thresholdOf?: "usable" | "conversation" | undefined
  /** The provider cache's time to live in ms, for `Input.cache`; default `DEFAULT_TTL`. */
  readonly ttl?: number | undefined
  /**
   * Whether it prunes only in batches (a prune rewrites the cached prefix from the first cleared output on): then
   * `withRules` adds its rules' choices only when the strategy prunes anyway, or the cache is cold or at a pivot.
   */
  readonly batched?: boolean | undefined
  /** Before each model call. */
  readonly beforeCall?: ((input: Input) => Decision) | undefined
  /** After each model step (the application's `prune`). */
  readonly afterStep?: ((input: Input) => Decision) | undefined
  /** What the compaction about to start keeps verbatim, when it differs from `config`'s tail. */
  readonly keep?: ((input: Input) => Keep | undefined) | undefined
}

/** Nothing to do. */
export const nothing: Decision = { _tag: "Nothing" }

/** A composable prune rule: the outputs it would clear now, each with its rule's name and a reason. */
export interface Rule {
  readonly name: string
  readonly select: (input: Input) => ReadonlyArray<PruneTarget>
}

const merge = (decision: Decision, parts: ReadonlyArray<PruneTarget>): Decision => {
  if (parts.length === 0 || decision._tag === "Compact") return decision
  return decision._tag === "Nothing"
    ? { _tag: "Prune", parts }
    : { _tag: "Prune", walk: decision.walk, parts: [...decision.parts, ...parts] }
}

/**
 * `base` with the prune `rules` added: after each step (and before a call when `base` prunes then), the outputs (and
 * inputs) the rules choose are cleared too, after `base`'s own. A compaction decided by `base` wins (it sheds more).
 * For a `batched` strategy the rules wait for a moment the cache is rewritten anyway: `base`'s prune clears something
 * now (its parts, or its walk choosing outputs on the window: `prunesNow`), the cache is cold, or at a pivot.
 *
 * **Example**
 * ```ts
 * const strategy = Strategy.withRules(OpenCodeStrategy.v1_17, PruneRules.duplicateCalls, PruneRules.erroredInputs(2))
 * ```
 */
export const withRules = (base: Strategy, ...rules: ReadonlyArray<Rule>): Strategy => {
  const chosen = (input: Input, decision: Decision): Decision => {
    if (decision._tag === "Compact") return decision
    const free = base.batched !== true || input.cache.cold || input.cache.atPivot || prunesNow(input, decision)
    return free ? merge(decision, dedupe(rules.flatMap((rule) => rule.select(input)))) : decision
  }
  return {
    ...base,
    name: [base.name, ...rules.map((rule) => rule.name)].join("+"),
    afterStep: (input) => chosen(input, base.afterStep?.(input) ?? nothing),
    beforeCall: (input) => {
      const decision = base.beforeCall?.(input) ?? nothing
      return decision._tag === "Prune" ? chosen(input, decision) : decision
    },
  }
}

/**
 * Whether a decision clears something on this window: a prune with parts, or whose walk chooses outputs
 * (`Prune.select` on `input.messages`; a pinned message's outputs may still make the Decider record fewer).
 */
export const prunesNow = (input: Input, decision: Decision): boolean =>
  decision._tag === "Prune" &&
  (decision.parts.length > 0 ||
    (decision.walk !== undefined && Prune.select(input.messages, decision.walk).parts.length > 0))

// The first rule to name a part's output (or input) gives it its reason.
const dedupe = (parts: ReadonlyArray<PruneTarget>): ReadonlyArray<PruneTarget> => {
  const seen = new Set<string>()
  return parts.filter((p) => {
    const key = p.target === "input" ? `${p.partId}\u0000input` : p.partId
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}

/**
 * A decision's prune as commands (the walk first, then the rules' outputs), for `Session.decide` at `at`; none for
 * `Nothing` or `Compact` (a compaction needs fresh ids: the runtime makes it).
 */
export const pruneCommands = (decision: Decision, at: number): ReadonlyArray<Command> => {
  if (decision._tag !== "Prune") return []
  const out: Array<Command> = []
  const walk = decision.walk
  if (walk !== undefined)
    out.push({
      _tag: "Prune",
      at,
      ...(walk.protect === undefined ? {} : { protect: walk.protect }),
      ...(walk.minimum === undefined ? {} : { minimum: walk.minimum }),
      ...(walk.protectedTools === undefined ? {} : { protectedTools: walk.protectedTools }),
      ...(walk.turns === undefined ? {} : { turns: walk.turns }),
      ...(walk.rule === undefined ? {} : { rule: walk.rule }),
      ...(walk.reason === undefined ? {} : { reason: walk.reason }),
    })
  if (decision.parts.length > 0) out.push({ _tag: "Prune", at, parts: decision.parts })
  return out
}

/** One tool call of the window, for rules: where it is, what it called, and how many user turns are newer. */
export interface Call {
  readonly messageId: MessageId
  readonly partId: PartId
  readonly tool: string
  readonly part: ToolPart
  /** The user turns that started after the message holding it (0: it is in the newest turn). */
  readonly turnsAfter: number
  /** Its position among the window's tool calls, oldest first. */
  readonly index: number
}

/**
 * The window's tool calls oldest first, each with the number of newer user turns; `before: n` keeps only those with
 * at least `n` newer turns (`before: 1`: not in the newest turn). Markers and summaries start no turn.
 */
export const outputs = (
  messages: ReadonlyArray<Message>,
  options: { readonly before?: number | undefined } = {},
): ReadonlyArray<Call> => {
  const starts = turns(messages).map((t) => t.start)
  const calls: Array<Call> = []
  let turn = 0
  messages.forEach((message, at) => {
    while (turn < starts.length && starts[turn]! <= at) turn++
    if (message.role !== "assistant" || message.summary === true) return
    for (const part of message.parts)
      if (part.type === "tool")
        calls.push({
          messageId: message.id,
          partId: part.id,
          tool: part.tool,
          part,
          turnsAfter: starts.length - turn,
          index: calls.length,
        })
  })
  const before = options.before ?? 0
  return before <= 0 ? calls : calls.filter((c) => c.turnsAfter >= before)
}
