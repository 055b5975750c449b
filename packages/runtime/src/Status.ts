/**
 * How a session stands, as `prepare` and `usage` answer it: how full its context is, the HUD's text, what the caller
 * should do next, and whether a model's compaction request could help now. Pure functions of the state.
 */
import { ExtractiveSummary, FixedPrompt, Message, Overflow, Pins, Usage as UsageFold, Window } from "@pivot/core"
import type * as Compaction from "./Compaction.ts"
import type { CompactDeclined, Prepared, Usage } from "./ContextManagerTypes.ts"
import * as Hud from "./Hud.ts"
import type { State } from "./Sessions.ts"

/**
 * The fixed prompt a session's threshold is measured above (`Overflow.trigger`): the measured one (`FixedPrompt`, with
 * `step` when it is the call being recorded) when the strategy asks for it (`Settings.aboveFixed`), else none.
 */
export const fixedOf = (
  state: State,
  settings: Compaction.Settings,
  step?: Message.AssistantMessage,
): number | undefined => {
  if (settings.aboveFixed !== true) return undefined
  const fixed = step === undefined ? state.runtime.fixed : FixedPrompt.withStep(state.runtime.fixed, step)
  return fixed.tokens
}

/** A command's `fixed` key: absent when there is no fixed prompt to measure the threshold above. */
export const withFixed = (fixed: number | undefined): { readonly fixed?: number } =>
  fixed === undefined ? {} : { fixed }

/** How full the context is, for a HUD: the last call's count, or `estimate()` when no call measured the window. */
export const usageOf = (state: State, settings: Compaction.Settings, warnAt: number, estimate: () => number): Usage => {
  const cap = settings.config.output_token_max
  const usable = Overflow.usable(settings.config, settings.model.limits, cap)
  const trigger = Overflow.trigger(settings.config, settings.model.limits, cap, fixedOf(state, settings))
  const runtime = state.runtime
  // After a pivot or a prune no call has measured the new window yet: estimate it (`Usage.measured`).
  const reported =
    runtime.lastCall !== undefined && runtime.lastCall.tokens > 0 && UsageFold.measured(runtime.usage) !== undefined
  const tokens = reported ? runtime.lastCall!.tokens : estimate()
  const status =
    state.session.pending !== undefined || runtime.awaitingContinue !== undefined
      ? "compacting"
      : runtime.suspended || Overflow.reaches(tokens, trigger)
        ? "over"
        : trigger !== undefined && tokens >= trigger * warnAt
          ? "warn"
          : "ok"
  return {
    tokens,
    source: reported ? "reported" : "estimated",
    usable,
    trigger,
    percent: usable > 0 ? Math.round((tokens / usable) * 1000) / 10 : 0,
    status,
    pivots: runtime.pivots,
    streak: runtime.streak,
    suspended: runtime.suspended,
  }
}

/**
 * The HUD's text for `usage`: the one place its inputs are read from a session's state (the AI SDK's `prepare` and
 * OpenCode's plugin both call it). `overhead`: tokens the request carries besides the window (system prompt, tool
 * schemas), added when `usage` is an estimate (no call measured the window yet); a reported usage counted them.
 */
export const hudOf = (state: State, usage: Usage, hud: Hud.Options, cost: Hud.Cost | undefined, overhead = 0): string =>
  Hud.render(
    {
      tokens: usage.source === "estimated" ? usage.tokens + overhead : usage.tokens,
      usable: usage.usable,
      pivots: usage.pivots,
      prunedParts: state.runtime.pruned.parts,
      prunedTokens: state.runtime.pruned.tokens,
      pinned: {
        messages: Pins.messageIds(state.session.window.pins).length,
        tokens: Pins.pinnedTokens(state.session.window.pins),
      },
      ...(cost === undefined ? {} : { cost }),
    },
    hud,
  )

/** Why a model's compaction request cannot help now, if it cannot (see `CompactDeclined`). */
export const declineOf = (state: State): CompactDeclined | undefined => {
  if (state.session.pending !== undefined || state.runtime.inFlight !== undefined) return "compaction-pending"
  if (state.runtime.modelCompacted) return "once-per-turn"
  const conversational = Window.messages(state.session.window).some((m) =>
    m.role === "assistant"
      ? m.summary !== true
      : Message.compactionPartOf(m) === undefined &&
        !m.parts.some((part) => part.type === "text" && part.metadata?.compaction_continue === true),
  )
  return conversational ? undefined : "nothing-to-compact"
}

/** What the caller should do next (`Prepared.next`). */
export const nextStep = (state: State, messages: ReadonlyArray<Message.Message>): Prepared["next"] => {
  if (state.runtime.suspended && state.runtime.lastCall?.overflow === true) return "stop"
  const last = messages.at(-1)
  if (last === undefined) return "wait"
  if (last.role === "user") return "call"
  return ExtractiveSummary.midTask(messages) ? "call" : "wait"
}
