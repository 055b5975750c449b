/**
 * Compaction under drive mode (option `driveCompaction`, ADR 0035): before an agent call, pivot reads whether the
 * session's strategy would compact now (`ContextManager.compactionDue`: the strategy's trigger reached by the last
 * call, or its rule before a call, e.g. cache-aware's rent-or-buy) and, when this module's rule says so, asks OpenCode
 * for its own compaction (`client.session.summarize`, sent without waiting: OpenCode adds the compaction's marker now
 * and runs it when the call in progress has ended). OpenCode then runs its summariser with pivot's prompt and history
 * (the `experimental.session.compacting` and messages hooks), and the recorder records the summary and kept tail as a
 * pivot like any other.
 *
 * The rule (`decide`) keeps pivot's and OpenCode's thresholds from both firing and from looping:
 *
 * - nothing is asked before a call has measured the window since the latest pivot, nor while a compaction is pending;
 * - nothing is asked when the coming call may reach OpenCode's own limit (its size, estimated, plus the output it may
 *   add, reaches the usable window): OpenCode compacts on its own then, and a marker of pivot's beside its own would be
 *   a second request for one compaction;
 * - one request per pivot: after asking, nothing more until the pivot it asked for is recorded (a summary that fails
 *   leaves it at that; OpenCode's own overflow still compacts);
 * - after the pivot it asked for, pivot asks again only once a measured call was under the strategy's trigger: a
 *   summary that leaves the window over the trigger would otherwise be asked for again at once, without end. A pivot
 *   pivot did not ask for (OpenCode's own) starts afresh.
 *
 * Each request is recorded once (`CompactionRequestedByStrategy`, ADR 0044): why pivot asked, the tokens it measured,
 * the strategy's trigger and OpenCode's own limit, linked to the marker OpenCode added for it (`linked`) as soon as
 * the recorder records that marker. A request OpenCode refused is forgotten (`failed`), so it never links to a
 * compaction OpenCode starts on its own later.
 */
import { CacheAwareStrategy, type Events, type Message, Model, Overflow } from "@pivot/core"
import type { CompactionDue } from "@pivot/runtime"

/** Why the strategy would compact now (`ContextManager.CompactionDue.reason`). */
export type Reason = "threshold" | "rent-or-buy"

/** What the rule reads before an agent call. */
export interface Situation {
  /** Why the strategy would compact now, or undefined. */
  readonly reason: Reason | undefined
  /** A call measured the window since the latest pivot (the usage is reported, not estimated). */
  readonly measured: boolean
  /** A compaction is pending (asked for and not settled). */
  readonly compacting: boolean
  /** The pivots recorded so far. */
  readonly pivots: number
  /** The coming request's size in tokens, estimated: the window with the system prompt and tools. */
  readonly request: number
  /** OpenCode's own limit: the usable window (a call whose count reaches it makes OpenCode compact). */
  readonly usable: number
  /** The most output the coming call may add to its count. */
  readonly output: number
}

/** What pivot remembers of its latest request in a session. */
export interface Asked {
  /** The pivots recorded when it asked. */
  readonly pivots: number
  /** A measured call after the pivot it asked for was under the strategy's trigger. */
  readonly progressed: boolean
}

/** Why nothing is asked now. */
export type Why = "no-model" | "not-due" | "unmeasured" | "compacting" | "opencode" | "asked" | "no-progress"

/** The rule's answer: ask OpenCode to compact, or wait (and why). */
export type Verdict = { readonly _tag: "Ask"; readonly reason: Reason } | { readonly _tag: "Wait"; readonly why: Why }

/** The rule (see the module's summary): the verdict, and what to remember of the session's requests from now on. */
export const decide = (
  situation: Situation,
  last: Asked | undefined,
): { readonly verdict: Verdict; readonly asked: Asked | undefined } => {
  // A pivot after the one pivot asked for (OpenCode's own) starts afresh.
  const mine = last !== undefined && situation.pivots <= last.pivots + 1 ? last : undefined
  const wait = (why: Why, asked: Asked | undefined = mine) => ({ verdict: { _tag: "Wait", why } as const, asked })
  if (situation.reason === undefined) {
    const progressed = mine !== undefined && situation.measured && situation.pivots > mine.pivots
    return wait("not-due", progressed ? { ...mine, progressed: true } : mine)
  }
  if (situation.compacting) return wait("compacting")
  if (!situation.measured) return wait("unmeasured")
  if (Overflow.reaches(situation.request + situation.output, situation.usable)) return wait("opencode")
  if (mine !== undefined && situation.pivots <= mine.pivots) return wait("asked")
  if (mine !== undefined && !mine.progressed) return wait("no-progress")
  return { verdict: { _tag: "Ask", reason: situation.reason }, asked: { pivots: situation.pivots, progressed: false } }
}

/** The most output a call of a model with `limits` may add (OpenCode's cap applied: `Model.maxOutputTokens`). */
export const outputOf = (limits: Model.ModelLimits): number => Model.maxOutputTokens(limits)

/**
 * Whether the agent goes on after a compaction pivot asked for (OpenCode's continue message): only when the turn was
 * in progress (`CacheAwareStrategy.turnInProgress` of the session's messages), so a turn that had ended is not resumed
 * unprompted. `messages`: everything the session recorded (`ContextManager.transcript`).
 */
export const goesOn = (messages: ReadonlyArray<Message.Message>): boolean =>
  CacheAwareStrategy.turnInProgress(messages) !== undefined

/** What pivot measured when it asked: `CompactionRequestedByStrategy` without the marker OpenCode adds for it. */
export type Ask = Omit<Events.CompactionRequestedByStrategy, "_tag" | "markerId">

/**
 * The record of a request, linked to the marker OpenCode added for it: the first of `markers` (the markers the recorder
 * just recorded, oldest first) created at or after the request; undefined when none is (the marker is not recorded
 * yet). OpenCode adds the marker when it receives the request, in the same process, so its time is never earlier.
 */
export const linked = (
  ask: Ask,
  markers: ReadonlyArray<Message.UserMessage>,
): Events.CompactionRequestedByStrategy | undefined => {
  const marker = markers.find((m) => m.createdAt >= ask.at)
  return marker === undefined ? undefined : { _tag: "CompactionRequestedByStrategy", markerId: marker.id, ...ask }
}

/** What the asker needs from the plugin. */
export interface Deps {
  /** The runtime's answer for a session (`ContextManager.compactionDue`). */
  readonly due: (sessionId: string) => Promise<CompactionDue>
  /** The session model's limits as OpenCode last named them; undefined before it named one. */
  readonly limits: (sessionId: string) => Model.ModelLimits | undefined
  /** Asks OpenCode for an automatic compaction of the session, without waiting for it. */
  readonly ask: (sessionId: string) => void
  /** The strategy's name, for the record. */
  readonly strategy?: string | undefined
  /** The time now (ms); `Date.now` by default. */
  readonly now?: (() => number) | undefined
}

/** The asker of one plugin: the rule applied before each agent call, with what it remembers per session. */
export const make = (deps: Deps) => {
  const asked = new Map<string, Asked>()
  // Sessions whose compaction pivot asked for has not ended yet (until OpenCode's `session.compacted`).
  const pending = new Set<string>()
  // Requests whose marker is not recorded yet, by session: what pivot measured when it asked.
  const unlinked = new Map<string, Ask>()
  return {
    /** Before an agent call: asks OpenCode to compact when the rule says so. `overhead`: the system prompt and tools. */
    beforeCall: async (sessionId: string, overhead: number): Promise<Verdict> => {
      const limits = deps.limits(sessionId)
      if (limits === undefined) return { _tag: "Wait", why: "no-model" }
      const due = await deps.due(sessionId)
      const request = Math.max(due.usage.tokens, due.estimated + overhead)
      const { verdict, asked: next } = decide(
        {
          reason: due.reason,
          measured: due.usage.source === "reported",
          compacting: due.usage.status === "compacting",
          pivots: due.usage.pivots,
          request,
          usable: due.usage.usable,
          output: outputOf(limits),
        },
        asked.get(sessionId),
      )
      if (next === undefined) asked.delete(sessionId)
      else asked.set(sessionId, next)
      if (verdict._tag === "Ask") {
        pending.add(sessionId)
        unlinked.set(sessionId, {
          at: (deps.now ?? Date.now)(),
          reason: verdict.reason,
          ...(deps.strategy === undefined ? {} : { strategy: deps.strategy }),
          tokens: Math.round(due.usage.tokens),
          ...(due.usage.trigger === undefined ? {} : { trigger: Math.round(due.usage.trigger) }),
          request: Math.round(request),
          usable: Math.round(due.usage.usable),
        })
        deps.ask(sessionId)
      }
      return verdict
    },
    /**
     * The recorder recorded `markers` in the session: the record of the request they answer (`linked`), once; the
     * request is then forgotten.
     */
    link: (
      sessionId: string,
      markers: ReadonlyArray<Message.UserMessage>,
    ): Events.CompactionRequestedByStrategy | undefined => {
      const ask = unlinked.get(sessionId)
      const event = ask === undefined ? undefined : linked(ask, markers)
      if (event !== undefined) unlinked.delete(sessionId)
      return event
    },
    /** OpenCode refused the request: nothing is pending, nothing is linked. */
    failed: (sessionId: string): void => {
      pending.delete(sessionId)
      unlinked.delete(sessionId)
    },
    /** Whether the compaction OpenCode runs in the session now is one pivot asked for. */
    asked: (sessionId: string): boolean => pending.has(sessionId),
    /** OpenCode ended a compaction of the session. */
    compacted: (sessionId: string): void => {
      pending.delete(sessionId)
    },
  }
}
