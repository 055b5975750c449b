/**
 * The demo's live commentary: it reads the session's events as they are appended, with their stream versions, and
 * says what happened in a line or two each — the context usage of every model call as a bar, each overflow, pivot,
 * continue, replay, skip and prune — then a summary and the `pivot` commands that replay every pivot. Pure: it folds
 * the events it is given and answers lines; every number comes from the events or from pivot's estimate of the
 * window they fold to.
 */
import {
  type Config,
  type Events,
  Message,
  type Model,
  Overflow,
  Pins,
  Prune,
  Session,
  Tail,
  Tokens,
  Window,
} from "@pivot/core"
import { bar, count, plain, type Style, truncate } from "./Style.ts"

type Event = Events.Event

/** An event and its stream version. */
export interface Logged {
  readonly event: Event
  readonly version: number
}

/** What the commentary needs to know besides the events. */
export interface Settings {
  readonly sessionId: string
  /** The SQLite file, as the replay commands should name it. */
  readonly db: string
  readonly model: Model.ModelRef
  readonly limits: Model.ModelLimits
  readonly config: Config.CompactionConfig
  /** Prune thresholds when not OpenCode's. */
  readonly pruneThresholds?: { readonly protect?: number; readonly minimum?: number } | undefined
  /** Tokens every call carries besides the window (system prompt, tool definitions), for window estimates. */
  readonly overheadTokens: number
  /** Who writes the summaries, for the header. */
  readonly summarizer: string
  readonly style: Style
  /** Line width for text that can be cut. */
  readonly width: number
}

/** A pivot and the stream versions that replay the windows around it. */
export interface Pivot {
  readonly number: number
  readonly markerId: string
  /** The version of `CompactionRequested`. */
  readonly requestedVersion: number
  /** The version of `SummaryFinished` (core's `CompactionHistory` `settledVersion`). */
  readonly settledVersion: number
  /** The window of the last model call before the compaction was requested. */
  readonly before: number
  /** The window of the first model call after the pivot; the newest version when no call followed. */
  readonly after: number
  /** Whether a model call followed the pivot (else `after` is the window the next call would get). */
  readonly called: boolean
}

/** The commentary's state. */
export interface Narrator {
  /** The opening lines: the session, the model and its limits, the compaction settings. */
  readonly header: () => ReadonlyArray<string>
  /** Lines for events just appended (in order, versions ascending). */
  readonly feed: (batch: ReadonlyArray<Logged>) => ReadonlyArray<string>
  /** The pivots so far. */
  readonly pivots: () => ReadonlyArray<Pivot>
  /** The closing lines: what happened, the window now, and the replay commands. */
  readonly summary: () => ReadonlyArray<string>
}

/** The shell-safe form of a path (quoted when it holds anything but letters, digits and `._/-`). */
export const shellWord = (word: string): string => (/^[\w./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`)

/** The command that prints the window at a stream version. */
export const windowCommand = (db: string, sessionId: string, version: number): string =>
  `npx pivot window --db ${shellWord(db)} --session ${sessionId} --at ${version}`

/** The command that opens the web viewer on the database. */
export const serveCommand = (db: string): string => `npx pivot serve ${shellWord(db)}`

/** The command that prints the session's audit: compactions, prunes, summaries. */
export const inspectCommand = (db: string, sessionId: string): string =>
  `npx pivot inspect --db ${shellWord(db)} --session ${sessionId}`

const plural = (n: number, one: string, many = `${one}s`) => `${count(n)} ${n === 1 ? one : many}`

const oneLine = (text: string): string => text.replace(/\s+/g, " ").trim()

const userText = (message: Message.UserMessage): string =>
  oneLine(message.parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join(" "))

const targetOf = (input: Readonly<Record<string, unknown>>): string => {
  const target = [input.filePath, input.pattern, input.command].find((v) => typeof v === "string")
  return typeof target === "string" ? oneLine(target) : ""
}

/** `read 2, bash 1`. */
const tally = (names: ReadonlyArray<string>): string => {
  const counts = new Map<string, number>()
  for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1)
  return [...counts].map(([name, n]) => `${name} ${n}`).join(", ")
}

/** Why the extractive summary stood in, by `SummaryFallbackUsed` reason. */
const FALLBACK: Readonly<Record<Events.FallbackReason, string>> = {
  failed: "the compaction model failed",
  timeout: "the compaction model did not answer in time",
  empty: "the compaction model answered nothing",
  overflow: "the summariser input did not fit the compaction model",
  interrupted: "the summary call was interrupted",
  invalid: "the compaction model's answer was invalid",
  larger: "the model's summary was larger than what it replaced",
  "too-large": "the head is too large for the compaction model",
}

/** Starts the commentary of one session. */
export const make = (settings: Settings): Narrator => {
  const { style, width, limits, config } = settings
  const cap = config.output_token_max
  const usable = Overflow.usable(config, limits, cap)
  const trigger = Overflow.trigger(config, limits, cap)

  let state = Session.initialState
  let version = 0
  let turns = 0
  let lastCall: { readonly version: number } | undefined
  /** The estimate of the next call just before the compaction request being read. */
  let requestEstimate = 0
  const totals = {
    calls: 0,
    refused: 0,
    failedCalls: 0,
    toolCalls: 0,
    overflows: 0,
    abandoned: 0,
    failed: 0,
    fallbacks: 0,
    prunes: 0,
    partsPruned: 0,
    tokensPruned: 0,
    continued: 0,
    replayed: 0,
    skipped: 0,
  }
  // Compactions by marker, from their request to the first call after them.
  const open = new Map<
    string,
    { requestedVersion: number; before: number; estimate: number; head: number; tail: number; updated: boolean }
  >()
  const pivots: Array<Omit<Pivot, "after" | "called"> & { after: number | undefined }> = []

  /** pivot's estimate of the next call's input: the window the events fold to, plus the fixed overhead. */
  const estimate = (): number =>
    Tokens.estimateWindow(Window.render(state.window).map((r) => r.message)) + settings.overheadTokens

  const percent = (tokens: number) => (usable > 0 ? Math.round((tokens / usable) * 100) : 100)

  const header = (): ReadonlyArray<string> => {
    const protect = settings.pruneThresholds?.protect ?? Prune.PRUNE_PROTECT
    const minimum = settings.pruneThresholds?.minimum ?? Prune.PRUNE_MINIMUM
    const scaled = protect !== Prune.PRUNE_PROTECT || minimum !== Prune.PRUNE_MINIMUM
    const tailTurns = config.tail_turns ?? Tail.DEFAULT_TAIL_TURNS
    const tail = `tail kept: ${plural(tailTurns, "turn")} within ${count(Tail.tailBudget(config, limits))} tokens`
    return [
      style.bold(`pivot demo · session ${settings.sessionId} in ${settings.db}`),
      `  model ${settings.model.providerId}/${settings.model.modelId}: context ${count(limits.context)}, output ${count(limits.output)} → usable ${count(usable)}`,
      `  ${trigger === undefined ? "automatic compaction off" : `compaction at ${count(trigger)} tokens`} · ${tail}`,
      config.prune === true
        ? `  prune on: protect ${count(protect)}, minimum ${count(minimum)}${scaled ? style.dim(` (OpenCode's: ${count(Prune.PRUNE_PROTECT)}, ${count(Prune.PRUNE_MINIMUM)})`) : ""}`
        : "  prune off",
      ...(Pins.pinsFirstMessage(config)
        ? [
            `  pinned: the first message (the task), verbatim after every pivot (budget ${count(Pins.budget(config, limits))} tokens)`,
          ]
        : []),
      truncate(`  summaries: ${settings.summarizer}`, width),
    ]
  }

  const stepLine = (message: Message.AssistantMessage): string => {
    const tokens = Tokens.contextCount(message.tokens)
    const tools = message.parts.flatMap((part) => (part.type === "tool" ? [part] : []))
    const what =
      tools.length > 0
        ? tools
            .map((part) => `${part.tool} ${targetOf(part.state.input)}${part.state.status === "error" ? " ✗" : ""}`)
            .join(", ")
        : `answers: ${oneLine(message.parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join(" "))}`
    const usage = (paint: Style) =>
      `${bar(paint, tokens, usable)} ${String(percent(tokens)).padStart(3)}% of usable ${count(usable)} · ${count(tokens).padStart(6)} tokens · `
    // Measured without colour codes, which take no room on the screen.
    const visible = usage(plain).length
    return `  ${usage(style)}${style.dim(truncate(oneLine(what), Math.max(10, width - 2 - visible)))}`
  }

  const one = (logged: Logged, pruned: Array<Logged>): Array<string> => {
    const { event } = logged
    const lines: Array<string> = []
    switch (event._tag) {
      case "UserMessageAdded":
        turns++
        lines.push("", style.bold(truncate(`Turn ${turns} · ${userText(event.message)}`, width)))
        break
      case "AssistantStepRecorded":
        if (event.message.summary === true) break
        totals.calls++
        for (const part of event.message.parts) if (part.type === "tool") totals.toolCalls++
        lines.push(stepLine(event.message))
        break
      case "ProviderErrorReported":
        totals.calls++
        if (event.overflow) totals.refused++
        else totals.failedCalls++
        lines.push(
          style.red(
            truncate(
              `  ✗ ${event.overflow ? "the provider refused the call" : "the call failed"}: ${oneLine(event.error.message)}`,
              width,
            ),
          ),
        )
        break
      case "OverflowDetected": {
        totals.overflows++
        const at = event.trigger === undefined ? "" : ` ≥ the trigger ${count(event.trigger)}`
        const why =
          event.source === "usage"
            ? `the call used ${count(event.tokens)} tokens${at}`
            : event.source === "pre-check"
              ? `the last call used ${count(event.tokens)} tokens${at} (checked before the next call)`
              : "the prompt does not fit the model"
        lines.push(style.yellow(`  ▲ overflow: ${why}`))
        break
      }
      case "CompactionRequested":
        open.set(event.marker.id, {
          requestedVersion: logged.version,
          before: lastCall === undefined ? logged.version - 1 : lastCall.version - 1,
          estimate: requestEstimate,
          head: 0,
          tail: 0,
          updated: false,
        })
        break
      case "CompactionStarted": {
        const entry = open.get(event.markerId)
        if (entry !== undefined) {
          entry.head = event.plan.head.length
          entry.tail = event.plan.tail.length
          entry.updated = event.plan.previousSummary !== undefined
        }
        break
      }
      case "SummaryInputBudgeted":
        lines.push(
          style.dim(
            `  … the head did not fit the compaction model: ${plural(event.dropped.length, "oldest message")} left out, ${event.digest ? "their digest sent instead" : "dropped"}`,
          ),
        )
        break
      case "CompactionAbandoned":
        totals.abandoned++
        lines.push(
          style.red(
            `  ■ compaction stopped: ${plural(event.attempts, "compaction")} in a row did not get usage under the trigger`,
          ),
        )
        break
      case "SummaryFinished": {
        const entry = open.get(event.markerId)
        if (entry === undefined) break
        const number = pivots.length + 1
        pivots.push({
          number,
          markerId: event.markerId,
          requestedVersion: entry.requestedVersion,
          settledVersion: logged.version,
          before: entry.before,
          after: undefined,
        })
        const after = estimate()
        const summary = Tokens.estimate(Message.summaryText(event.summary) ?? "")
        lines.push(
          style.magenta(
            `  ◆ pivot ${number}: ${plural(entry.head, "message")} summarised, ${count(entry.tail)} kept verbatim · next call ~${count(entry.estimate)} → ~${count(after)} tokens`,
          ),
          style.dim(
            `    the summary (~${count(summary)} tokens) ${entry.updated ? "updates the previous one" : "is the first"}; the ${entry.head === 1 ? "message stays" : "messages stay"} in the log`,
          ),
        )
        break
      }
      case "SummaryFallbackUsed":
        totals.fallbacks++
        lines.push(style.yellow(`  ◇ pivot's extractive summary stands in: ${FALLBACK[event.reason]}`))
        if (event.error !== undefined) lines.push(style.dim(truncate(`    (${oneLine(event.error.message)})`, width)))
        break
      case "SummaryFailed":
        totals.failed++
        lines.push(
          style.red(truncate(`  ✗ the summary failed, no pivot: ${event.summary.error?.message ?? "unknown"}`, width)),
        )
        break
      case "SecretsRedacted":
        lines.push(
          style.dim(
            `  ⊘ ${plural(event.findings.length, "secret")} redacted from the ${event.stage} (${tally(event.findings.map((f) => f.kind))})`,
          ),
        )
        break
      case "SecretsRedactedOnRecord":
        lines.push(
          style.dim(
            `  ⊘ ${plural(event.findings.length, "secret")} redacted before recording (${tally(event.findings.map((f) => f.kind))})`,
          ),
        )
        break
      case "ContinueRequested":
        totals.continued++
        lines.push(style.green(truncate(`  ↻ continue: "${userText(event.message)}"`, width)))
        break
      case "TurnReplayed":
        totals.replayed++
        lines.push(style.green(truncate(`  ⟲ replay: the refused request is sent again after the summary`, width)))
        break
      case "AutoContinueSkipped":
        totals.skipped++
        lines.push(
          style.dim(
            event.reason === "waiting-for-user"
              ? "  ⏸ no continue message: the agent had finished its turn and waits for the user"
              : `  ⏸ no continue message: plugin ${event.plugin ?? "?"} vetoed it`,
          ),
        )
        break
      case "PartCompacted":
        pruned.push(logged)
        break
      case "PluginFailed":
        lines.push(style.red(truncate(`  ! plugin ${event.plugin} failed in ${event.hook}: ${event.message}`, width)))
        break
      default:
        break
    }
    return lines
  }

  /** The prune lines for a run of `PartCompacted` events; `before` is the estimate before the first of them. */
  const pruneLines = (pruned: ReadonlyArray<Logged>, before: number): ReadonlyArray<string> => {
    const tools: Array<string> = []
    let tokens = 0
    for (const { event } of pruned)
      if (event._tag === "PartCompacted") {
        tokens += event.tokens
        const stored = Session.message(state, event.messageId)
        const part = stored?.role === "assistant" ? stored.parts.find((p) => p.id === event.partId) : undefined
        tools.push(part?.type === "tool" ? part.tool : "tool")
      }
    totals.prunes++
    totals.partsPruned += pruned.length
    totals.tokensPruned += tokens
    return [
      style.cyan(
        `  ✂ prune: ${plural(pruned.length, "old tool output")} cleared, ${count(tokens)} tokens · next call ~${count(before)} → ~${count(estimate())}`,
      ),
      style.dim(truncate(`    ${tally(tools)}; the outputs stay in the log`, width)),
    ]
  }

  const feed = (batch: ReadonlyArray<Logged>): ReadonlyArray<string> => {
    const lines: Array<string> = []
    let pruned: Array<Logged> = []
    let pruneBefore = 0
    const closePrune = () => {
      if (pruned.length > 0) lines.push(...pruneLines(pruned, pruneBefore))
      pruned = []
    }
    for (const logged of batch) {
      const { event } = logged
      if (event._tag !== "PartCompacted") closePrune()
      else if (pruned.length === 0) pruneBefore = estimate()
      const isCall =
        (event._tag === "AssistantStepRecorded" && event.message.summary !== true) ||
        event._tag === "ProviderErrorReported"
      if (isCall) {
        for (const pivot of pivots) if (pivot.after === undefined) pivot.after = logged.version - 1
        lastCall = { version: logged.version }
      }
      if (event._tag === "CompactionRequested") requestEstimate = estimate()
      state = Session.evolve(state, event)
      version = logged.version
      lines.push(...one(logged, pruned))
    }
    closePrune()
    return lines
  }

  const done = (): ReadonlyArray<Pivot> =>
    pivots.map((p) => ({ ...p, after: p.after ?? version, called: p.after !== undefined }))

  /** ` (1 refused, 2 failed)` after the number of calls. */
  const callNotes = (): string => {
    const notes = [
      totals.refused > 0 ? `${count(totals.refused)} refused` : undefined,
      totals.failedCalls > 0 ? `${count(totals.failedCalls)} failed` : undefined,
    ].filter((n) => n !== undefined)
    return notes.length > 0 ? ` (${notes.join(", ")})` : ""
  }

  const summary = (): ReadonlyArray<string> => {
    const next = estimate()
    const window = Window.render(state.window).length
    const kinds = [
      totals.continued > 0 ? `${count(totals.continued)} continued` : undefined,
      totals.replayed > 0 ? `${count(totals.replayed)} replayed` : undefined,
      totals.skipped > 0 ? `${count(totals.skipped)} left waiting` : undefined,
    ].filter((k) => k !== undefined)
    const lines = [
      "",
      style.bold(
        `Done · ${plural(turns, "turn")}, ${plural(totals.calls, "model call")}${callNotes()}, ${plural(totals.toolCalls, "tool call")} · ${plural(version, "event")}`,
      ),
      `  ${plural(totals.overflows, "overflow")} → ${plural(pivots.length, "pivot")}${kinds.length > 0 ? ` (${kinds.join(", ")})` : ""}${totals.fallbacks > 0 ? ` · ${plural(totals.fallbacks, "fallback summary", "fallback summaries")}` : ""}${totals.failed > 0 ? ` · ${plural(totals.failed, "failed summary", "failed summaries")}` : ""}`,
      `  ${plural(totals.prunes, "prune")}: ${plural(totals.partsPruned, "tool output")} cleared, ${count(totals.tokensPruned)} tokens off the model input (all still in the log)`,
      `  the next call would send ${plural(window, "message")}, ~${count(next)} tokens (${percent(next)}% of usable ${count(usable)})`,
    ]
    if (totals.abandoned > 0)
      lines.push(style.red(`  compaction stopped ${plural(totals.abandoned, "time")} at its bound`))
    lines.push(
      "",
      style.bold("Replay it: each window is folded from the events in the database, nothing is recomputed"),
    )
    for (const pivot of done())
      lines.push(
        `  pivot ${pivot.number}: the window of the last call before it, then ${pivot.called ? "of the first call after it" : "the one the next call will get"}`,
        `    ${windowCommand(settings.db, settings.sessionId, pivot.before)}`,
        `    ${windowCommand(settings.db, settings.sessionId, pivot.after)}`,
      )
    lines.push("  every compaction, prune and summary:", `    ${inspectCommand(settings.db, settings.sessionId)}`)
    lines.push("  see it in a browser (timeline, windows, diffs, pivot reports):", `    ${serveCommand(settings.db)}`)
    return lines
  }

  return { header, feed, pivots: done, summary }
}
