/**
 * The demo's output for a person: the settings in force, then turn by turn the context usage, the model calls, and
 * each overflow, pivot, continue and prune; then the final window in short form and the totals. Pure: it formats a
 * `Story` (read from the events) into lines.
 */
import { Prune, Tail } from "@pivot/core"
import type { Example } from "./Example.ts"
import type { Moment, Story, Turn, WindowLine } from "./Story.ts"
import { bar, count, type Style, short, truncate } from "./Style.ts"

/** Formatting options. */
export interface Options {
  readonly style: Style
  /** Line width for truncated text. */
  readonly width: number
}

const tally = (names: ReadonlyArray<string>): string => {
  const counts = new Map<string, number>()
  for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1)
  return [...counts].map(([name, n]) => `${name} ${n}`).join(" · ")
}

const plural = (n: number, one: string, many = `${one}s`) => `${count(n)} ${n === 1 ? one : many}`

/** The header: what ran, with which limits and settings. */
const header = (example: Example, story: Story, { style, width }: Options): Array<string> => {
  const { limits } = example.model
  const config = example.config
  const pruneOn = config.prune === true
  const protect = example.pruneThresholds?.protect ?? Prune.PRUNE_PROTECT
  const minimum = example.pruneThresholds?.minimum ?? Prune.PRUNE_MINIMUM
  const scaled = protect !== Prune.PRUNE_PROTECT || minimum !== Prune.PRUNE_MINIMUM
  const tailTurns = config.tail_turns ?? Tail.DEFAULT_TAIL_TURNS
  const trigger = story.trigger === undefined ? "auto-compaction off" : `compaction at ${count(story.trigger)} tokens`
  return [
    style.bold(`pivot demo · ${example.title}`),
    `  model ${example.model.providerId}/${example.model.modelId}: context ${count(limits.context)}, output ${count(limits.output)} → usable ${count(story.usable)}, ${trigger}`,
    pruneOn
      ? `  prune on: protect ${count(protect)}, minimum ${count(minimum)}${scaled ? style.dim(` (OpenCode: ${count(Prune.PRUNE_PROTECT)}, ${count(Prune.PRUNE_MINIMUM)})`) : ""} · tail kept: ${plural(tailTurns, "turn")} within ${count(Tail.tailBudget(config, limits))} tokens`
      : `  prune off · tail kept: ${plural(tailTurns, "turn")} within ${count(Tail.tailBudget(config, limits))} tokens`,
    `  each call also carries ${count(example.systemPromptTokens)} tokens of system prompt and tool definitions`,
    truncate(
      `  ${plural(example.turns.length, "user turn")} · ${plural(example.summaries.length, "canned summary", "canned summaries")} for the scripted summariser`,
      width,
    ),
  ]
}

const callsLine = (turn: Turn, style: Style): string => {
  const cells: Array<string> = []
  for (const call of turn.calls) {
    if (call.rejected) cells.push(style.red("✗"))
    else cells.push(call.overflowed ? style.yellow(`${short(call.tokens)}▲`) : short(call.tokens))
    if (call.pivotAfter) cells.push(style.magenta("◆"))
  }
  return `  ${style.dim("calls")}  ${cells.join(" ")}`
}

const moment = (m: Moment, story: Story, { style, width }: Options): string => {
  switch (m.kind) {
    case "overflow":
      return style.yellow(
        `  ▲ overflow: the call used ${count(m.tokens)} tokens, at or above the trigger of ${count(m.trigger)}${m.source === "pre-check" ? " (checked before the next call)" : ""}`,
      )
    case "rejected":
      return style.red(truncate(`  ✗ the provider rejected the call: ${m.message}`, width))
    case "pivot": {
      const what = m.updated ? "updated the summary with" : "summarised"
      const main = `  ◆ pivot ${m.number}: ${what} ${plural(m.head, "message")}, kept ${count(m.tail)} verbatim · next input ${count(m.before)} → ${count(m.after)} tokens`
      const below =
        story.trigger !== undefined && m.after >= story.trigger ? style.red(" (still over the trigger)") : ""
      const lines = [style.magenta(main) + style.dim(` · summary ${count(m.summaryTokens)} tokens`) + below]
      if (m.resumed === "wait")
        lines.push(style.dim("  ⏸ no continue message: the agent had finished its turn and waits for the user"))
      return lines.join("\n")
    }
    case "summary-failed":
      return style.red(truncate(`  ✗ the summary failed, no pivot: ${m.error}`, width))
    case "continue":
      return style.green(truncate(`  ↻ continue: "${m.text}"`, width))
    case "replay":
      return style.green(truncate(`  ⟲ replay: the request is sent again after the summary: "${m.text}"`, width))
    case "prune":
      return style.cyan(
        `  ✂ prune: cleared ${plural(m.parts, "tool output")} (${Object.entries(m.tools)
          .map(([tool, n]) => `${tool} ${n}`)
          .join(", ")}), ${count(m.tokens)} tokens · next input ${count(m.before)} → ${count(m.after)} tokens`,
      )
  }
}

const turnLines = (turn: Turn, story: Story, options: Options): Array<string> => {
  const { style, width } = options
  const title = turn.number === 0 ? "Before the first turn" : `Turn ${turn.number}`
  const lines = [style.bold(truncate(`${title} · ${turn.request.replace(/\s+/g, " ")}`, width))]
  const last = turn.calls.findLast((call) => !call.rejected)
  if (last !== undefined) {
    const pct = story.usable > 0 ? Math.round((last.tokens / story.usable) * 100) : 100
    lines.push(
      `  ${bar(style, last.tokens, story.usable)} ${String(pct).padStart(3)}% of usable ${count(story.usable)} · ${count(last.tokens)} tokens at the last call`,
    )
  }
  if (turn.calls.length > 0) lines.push(callsLine(turn, style))
  const tools = turn.calls.flatMap((call) => call.tools)
  const errors = turn.calls.reduce((sum, call) => sum + call.toolErrors, 0)
  if (tools.length > 0)
    lines.push(`  ${style.dim("tools")}  ${tally(tools)}${errors > 0 ? style.red(` (${errors} failed)`) : ""}`)
  for (const m of turn.moments) lines.push(moment(m, story, options))
  return lines
}

const TAGS: Record<NonNullable<WindowLine["tag"]>, string> = {
  marker: "◆ pivot marker",
  summary: "◆ summary",
  continue: "↻ continue",
  replay: "⟲ replayed turn",
  pruned: "✂ pruned",
}

const windowLines = (story: Story, { style, width }: Options): Array<string> => {
  const lines = [
    style.bold(
      `Final window: what the next call would send · ${plural(story.window.messages, "model message")}, ${count(story.window.tokens)} tokens with the system prompt`,
    ),
  ]
  for (const line of story.window.lines) {
    const tag = line.tag === undefined ? "" : TAGS[line.tag]
    const room = width - 2 - 10 - (tag === "" ? 0 : tag.length + 2)
    const text = truncate(line.text, room)
    const painted =
      line.tag === "marker" || line.tag === "summary"
        ? style.magenta
        : line.tag === "pruned"
          ? style.cyan
          : line.tag === undefined
            ? (s: string) => s
            : style.green
    lines.push(
      `  ${style.dim(line.role.padEnd(10))}${text.padEnd(room)}${tag === "" ? "" : `  ${painted(tag)}`}`.trimEnd(),
    )
  }
  return lines
}

const totalsLines = (story: Story, { style }: Options): Array<string> => {
  const t = story.totals
  return [
    style.bold("Totals"),
    `  ${plural(t.events, "event")} · ${plural(t.calls, "model call")} · ${plural(t.toolCalls, "tool call")}`,
    `  ${plural(t.overflows, "overflow")} · ${plural(t.pivots, "pivot")}${t.failedSummaries > 0 ? ` · ${plural(t.failedSummaries, "failed summary", "failed summaries")}` : ""} · ${plural(t.prunes, "prune")}: ${plural(t.partsPruned, "tool output")} cleared, ${count(t.tokensPruned)} tokens off the model input (all still in the log)`,
    `  ${plural(t.storedMessages, "message")} stored · ${plural(story.window.messages, "model message")} in the window`,
  ]
}

/** The whole report, as lines. */
export const format = (example: Example, story: Story, options: Options): Array<string> => [
  ...header(example, story, options),
  "",
  ...story.turns.flatMap((turn) => [...turnLines(turn, story, options), ""]),
  ...windowLines(story, options),
  "",
  ...totalsLines(story, options),
]
