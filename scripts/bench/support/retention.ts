// Artifact retention that does not hinge on where a session stops (issue 30): sampled at every turn's start and summed
// over the session, beside the last prompt's. One sample is the session's artifacts so far (`ArtifactCheck.check`: the
// files read and edited, the commands, the errors and the requests of every turn before this one) and which of them
// the prompt about to be sent names, read four ways:
// - `named`: the prompt as sent (system prompt, summaries with their facts blocks, the messages kept verbatim);
// - `bare`: the same with every summary's facts block left out (the same rule for every strategy: OpenCode has none);
// - `unindexed`: as `bare`, and every summary's reach index left out too (`ExtractiveSummary.withoutIndex`, ADR 0060:
//   the older files, edits and commands a summary keeps by name only), what the sections alone name;
// - `verbatim`: only the messages the window keeps verbatim (no summary at all).
// "Names" is `ArtifactCheck`'s literal rule (a file by its path or last segment, a command by its first line, an
// error by its line or message, a request by half its keywords).
import { ArtifactCheck, ExtractiveSummary, Facts, type Message, type ModelMessage, Tokens } from "@pivot/core"

/** A window as sent: each model message, and whether it is a summary (a compaction's assistant message). */
export interface Shown {
  readonly message: ModelMessage.ModelMessage
  readonly summary: boolean
}

/** One sample's counts: the artifacts so far, and those named each way. */
export interface Sample {
  readonly artifacts: number
  readonly named: number
  readonly bare: number
  readonly unindexed: number
  readonly verbatim: number
}

/** The model message with each text changed by `f`. */
const mapText = (message: ModelMessage.ModelMessage, f: (text: string) => string): ModelMessage.ModelMessage => {
  if (typeof message.content === "string")
    return { ...message, content: f(message.content) } as ModelMessage.ModelMessage
  return {
    ...message,
    content: message.content.map((p) => (p.type === "text" ? { ...p, text: f(p.text) } : p)),
  } as ModelMessage.ModelMessage
}

/** The model message with its facts block left out (only summaries carry one). */
export const withoutFacts = (message: ModelMessage.ModelMessage): ModelMessage.ModelMessage =>
  mapText(message, Facts.strip)

/** The model message with its facts block and its reach index left out (only summaries carry them). */
export const withoutIndex = (message: ModelMessage.ModelMessage): ModelMessage.ModelMessage =>
  mapText(message, (text) => ExtractiveSummary.withoutIndex(Facts.strip(text)))

/**
 * The texts a window shows (`ArtifactCheck.shownText`, after `system`): as sent, without facts blocks, and its verbatim
 * messages only.
 */
export const textsOf = (system: string, window: ReadonlyArray<Shown>) => {
  const text = (messages: ReadonlyArray<ModelMessage.ModelMessage>) =>
    ArtifactCheck.shownText([{ role: "system", content: system }, ...messages])
  return {
    named: text(window.map((s) => s.message)),
    bare: text(window.map((s) => (s.summary ? withoutFacts(s.message) : s.message))),
    unindexed: text(window.map((s) => (s.summary ? withoutIndex(s.message) : s.message))),
    verbatim: text(window.flatMap((s) => (s.summary ? [] : [s.message]))),
  }
}

/** The artifacts of `history` (the messages before the sample) and how many the window's texts name, each way. */
export const sample = (
  history: ReadonlyArray<Message.Message>,
  system: string,
  window: ReadonlyArray<Shown>,
): Sample => {
  const texts = textsOf(system, window)
  const count = (text: string) => ArtifactCheck.tally(ArtifactCheck.check(history, text))
  const named = count(texts.named)
  return {
    artifacts: named.total,
    named: named.named,
    bare: count(texts.bare).named,
    unindexed: count(texts.unindexed).named,
    verbatim: count(texts.verbatim).named,
  }
}

/** Samples summed: how many, and their counts added. */
export interface Totals extends Sample {
  readonly samples: number
}

export const empty: Totals = { samples: 0, artifacts: 0, named: 0, bare: 0, unindexed: 0, verbatim: 0 }

/** `totals` with one more sample (or the sums of two totals). */
export const add = (totals: Totals, s: Sample | Totals): Totals => ({
  samples: totals.samples + ("samples" in s ? s.samples : 1),
  artifacts: totals.artifacts + s.artifacts,
  named: totals.named + s.named,
  bare: totals.bare + s.bare,
  unindexed: totals.unindexed + s.unindexed,
  verbatim: totals.verbatim + s.verbatim,
})

/** A share of the artifacts, in percent with one decimal ("–" with none). */
export const share = (part: number, totals: Totals): string =>
  totals.artifacts === 0 ? "–" : `${((part / totals.artifacts) * 100).toFixed(1)}%`

/**
 * The newest `turns` user turns of `history` as their skeleton (an estimate of what a kept tail with its outputs
 * cleared would show): each request, and each tool call's name and input, without results or text. With its size in
 * tokens (its messages as JSON, the project's estimate).
 */
export const skeletonOf = (
  history: ReadonlyArray<Message.Message>,
  turns: number,
): { readonly window: ReadonlyArray<Shown>; readonly tokens: number } => {
  const starts = history.flatMap((m, i) => (ArtifactCheck.requests([m]).length > 0 ? [i] : []))
  const from = turns <= 0 ? history.length : (starts.at(-Math.min(turns, starts.length)) ?? history.length)
  const window = history.slice(from).flatMap((m): Array<Shown> => {
    if (m.role === "user") {
      const [text] = ArtifactCheck.requests([m])
      return text === undefined
        ? []
        : [{ message: { role: "user", content: [{ type: "text", text }] }, summary: false }]
    }
    const calls = m.parts.flatMap((p) =>
      p.type === "tool"
        ? [{ type: "tool-call" as const, toolCallId: p.callId, toolName: p.tool, input: p.state.input }]
        : [],
    )
    return calls.length === 0 ? [] : [{ message: { role: "assistant", content: calls }, summary: false }]
  })
  return { window, tokens: Tokens.estimate(JSON.stringify(window.map((s) => s.message))) }
}
