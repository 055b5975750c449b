/**
 * What happened in a session, turn by turn, read back from its events alone: the model calls and their usage, each
 * overflow, pivot, continue, replay and prune, and the window the next call would see. Every number is computed by
 * folding the events (token sizes of windows with the same estimate the scripted model uses), never taken from the
 * driver, so the report cannot say more than the log holds.
 */
import {
  type Config,
  Conversation,
  type Events,
  Message,
  type Model,
  Overflow,
  Render,
  Session,
  Tokens,
  Window,
} from "@pivot/core"
import { count } from "./Style.ts"
import { windowTokens } from "./Usage.ts"

type Event = Events.Event

/** What the story needs besides the events: the settings the session ran with. */
export interface Settings {
  readonly limits: Model.ModelLimits
  readonly config: Config.CompactionConfig
  readonly systemPromptTokens: number
}

/** One model call: its context usage (0 when the provider rejected it) and the tools it called. */
export interface Call {
  readonly tokens: number
  readonly tools: ReadonlyArray<string>
  readonly toolErrors: number
  readonly rejected: boolean
  /** The call's usage reached the compaction trigger. */
  readonly overflowed: boolean
  /** A pivot happened right after this call. */
  readonly pivotAfter: boolean
}

/** A pivot: a finished summary replaced the head of the window. */
export interface Pivot {
  readonly kind: "pivot"
  readonly number: number
  /** Messages summarised and kept verbatim, as recorded in the compaction plan. */
  readonly head: number
  readonly tail: number
  /** Estimated input tokens of the next call just before the compaction and right after the pivot. */
  readonly before: number
  readonly after: number
  readonly summaryTokens: number
  /** The summary updated an earlier one (the previous-summary anchor). */
  readonly updated: boolean
  /** How the agent went on: the continue message, the replayed turn, or waiting for the user. */
  readonly resumed: "continue" | "replay" | "wait"
}

/** Something worth telling that happened during a turn, in log order. */
export type Moment =
  | {
      readonly kind: "overflow"
      readonly source: "usage" | "pre-check"
      readonly tokens: number
      readonly trigger: number
    }
  | { readonly kind: "rejected"; readonly message: string }
  | Pivot
  | { readonly kind: "summary-failed"; readonly error: string }
  | { readonly kind: "continue"; readonly text: string }
  | { readonly kind: "replay"; readonly text: string }
  | {
      readonly kind: "prune"
      readonly parts: number
      readonly tokens: number
      readonly tools: Readonly<Record<string, number>>
      readonly before: number
      readonly after: number
    }

/** One user turn. */
export interface Turn {
  readonly number: number
  readonly request: string
  readonly calls: ReadonlyArray<Call>
  readonly moments: ReadonlyArray<Moment>
}

/** One line of the final window: a rendered model message, shortened. */
export interface WindowLine {
  readonly role: "system" | "user" | "assistant" | "tool"
  readonly text: string
  readonly tag?: "marker" | "summary" | "continue" | "replay" | "pruned"
}

/** The whole story. */
export interface Story {
  readonly turns: ReadonlyArray<Turn>
  readonly usable: number
  readonly trigger: number | undefined
  readonly window: {
    readonly lines: ReadonlyArray<WindowLine>
    readonly messages: number
    readonly tokens: number
  }
  readonly totals: {
    readonly events: number
    readonly calls: number
    readonly toolCalls: number
    readonly overflows: number
    readonly pivots: number
    readonly failedSummaries: number
    readonly prunes: number
    readonly partsPruned: number
    readonly tokensPruned: number
    readonly storedMessages: number
  }
}

const userText = (message: Message.UserMessage): string =>
  message.parts.flatMap((part) => (part.type === "text" ? [part.text] : [])).join(" ")

const isSynthetic = (message: Message.UserMessage): boolean =>
  message.parts.some((part) => part.type === "text" && part.synthetic === true)

const oneLine = (text: string): string => text.replace(/\s+/g, " ").trim()

interface MutableTurn {
  number: number
  request: string
  calls: Array<Call>
  moments: Array<Moment>
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/** Reads the story of a session from its events. */
export const read = (events: ReadonlyArray<Event>, settings: Settings): Story => {
  const input = (state: Session.State) => windowTokens(state.window) + settings.systemPromptTokens
  const turns: Array<MutableTurn> = []
  // Pivots by marker: created when the compaction is requested, completed as its events arrive.
  const pivots = new Map<string, Mutable<Pivot>>()
  const replayed = new Set<string>()
  let state = Session.initialState
  let turn: MutableTurn | undefined
  let prune: Mutable<Extract<Moment, { kind: "prune" }>> | undefined
  const totals = { overflows: 0, pivots: 0, failedSummaries: 0, prunes: 0, partsPruned: 0, tokensPruned: 0 }

  const current = (): MutableTurn => {
    if (turn === undefined) {
      turn = { number: 0, request: "(before the first request)", calls: [], moments: [] }
      turns.push(turn)
    }
    return turn
  }
  const markLastCall = (patch: Partial<Call>) => {
    const calls = current().calls
    const last = calls.at(-1)
    if (last !== undefined) calls[calls.length - 1] = { ...last, ...patch }
  }

  for (const event of events) {
    // Sizes before the event, where a moment compares before and after.
    if (event._tag === "PartCompacted" && prune === undefined) {
      prune = { kind: "prune", parts: 0, tokens: 0, tools: {}, before: input(state), after: 0 }
      current().moments.push(prune)
      totals.prunes++
    }
    if (event._tag !== "PartCompacted" && prune !== undefined) prune = undefined
    if (event._tag === "CompactionRequested")
      pivots.set(event.marker.id, {
        kind: "pivot",
        number: 0,
        head: 0,
        tail: 0,
        before: input(state),
        after: 0,
        summaryTokens: 0,
        updated: false,
        resumed: "wait",
      })
    state = Session.evolve(state, event)
    switch (event._tag) {
      case "UserMessageAdded":
        if (!isSynthetic(event.message)) {
          turn = {
            number: turns.filter((t) => t.number > 0).length + 1,
            request: userText(event.message),
            calls: [],
            moments: [],
          }
          turns.push(turn)
        }
        break
      case "AssistantStepRecorded": {
        const tools = event.message.parts.flatMap((part) => (part.type === "tool" ? [part] : []))
        current().calls.push({
          tokens: Tokens.contextCount(event.message.tokens),
          tools: tools.map((part) => part.tool),
          toolErrors: tools.filter((part) => part.state.status === "error").length,
          rejected: false,
          overflowed: false,
          pivotAfter: false,
        })
        break
      }
      case "ProviderErrorReported":
        current().calls.push({
          tokens: 0,
          tools: [],
          toolErrors: 0,
          rejected: true,
          overflowed: false,
          pivotAfter: false,
        })
        current().moments.push({ kind: "rejected", message: event.error.message })
        break
      case "OverflowDetected":
        totals.overflows++
        if (event.source === "usage") markLastCall({ overflowed: true })
        if (event.source !== "provider-error")
          current().moments.push({
            kind: "overflow",
            source: event.source,
            tokens: event.tokens,
            trigger: event.trigger ?? 0,
          })
        break
      case "CompactionStarted": {
        const pivot = pivots.get(event.markerId)
        if (pivot !== undefined) {
          pivot.head = event.plan.head.length
          pivot.tail = event.plan.tail.length
          pivot.updated = event.plan.previousSummary !== undefined
        }
        break
      }
      case "SummaryFinished": {
        const pivot = pivots.get(event.markerId)
        if (pivot === undefined) break
        pivot.number = ++totals.pivots
        pivot.after = input(state)
        pivot.summaryTokens = Tokens.estimate(Message.summaryText(event.summary) ?? "")
        markLastCall({ pivotAfter: true })
        current().moments.push(pivot)
        break
      }
      case "SummaryFailed":
        totals.failedSummaries++
        current().moments.push({ kind: "summary-failed", error: event.summary.error?.message ?? "unknown error" })
        break
      case "ContinueRequested":
      case "TurnReplayed": {
        const pivot = pivots.get(event.markerId)
        if (pivot !== undefined) {
          pivot.after = input(state)
          pivot.resumed = event._tag === "ContinueRequested" ? "continue" : "replay"
        }
        if (event._tag === "TurnReplayed") replayed.add(event.message.id)
        current().moments.push({
          kind: event._tag === "ContinueRequested" ? "continue" : "replay",
          text: userText(event.message),
        })
        break
      }
      case "PartCompacted": {
        const stored = Session.message(state, event.messageId)
        const part = stored?.role === "assistant" ? stored.parts.find((p) => p.id === event.partId) : undefined
        const tool = part?.type === "tool" ? part.tool : "tool"
        if (prune !== undefined) {
          prune.parts++
          prune.tokens += event.tokens
          prune.tools = { ...prune.tools, [tool]: (prune.tools[tool] ?? 0) + 1 }
          prune.after = input(state)
        }
        totals.partsPruned++
        totals.tokensPruned += event.tokens
        break
      }
    }
  }

  const calls = turns.flatMap((t) => t.calls)
  return {
    turns,
    usable: Overflow.usable(settings.config, settings.limits),
    trigger: Overflow.trigger(settings.config, settings.limits),
    window: windowOf(state, settings, replayed),
    totals: {
      ...totals,
      events: events.length,
      calls: calls.length,
      toolCalls: calls.reduce((sum, call) => sum + call.tools.length, 0),
      storedMessages: Conversation.messages(state.window.conversation).length,
    },
  }
}

/** What a tool call was about: its file, pattern or command. */
const targetOf = (input: unknown): string => {
  if (typeof input !== "object" || input === null) return ""
  const fields = input as Record<string, unknown>
  const target = [fields.filePath, fields.pattern, fields.command].find((v) => typeof v === "string")
  return typeof target === "string" ? oneLine(target) : ""
}

const lineCount = (n: number) => `${count(n)} ${n === 1 ? "line" : "lines"}`

/** The final window, one shortened line per rendered model message (tool results one per line). */
const windowOf = (state: Session.State, settings: Settings, replayed: ReadonlySet<string>): Story["window"] => {
  const lines: Array<WindowLine> = []
  const rendered = Window.render(state.window)
  for (const { sourceMessageId, message } of rendered) {
    const source = Session.message(state, sourceMessageId)
    switch (message.role) {
      case "system":
        lines.push({ role: "system", text: oneLine(message.content) })
        break
      case "user": {
        const text = oneLine(
          message.content.map((c) => (c.type === "text" ? c.text : `[${c.filename ?? "file"}]`)).join(" "),
        )
        const user = source?.role === "user" ? source : undefined
        const tag =
          user !== undefined && Message.isMarker(user)
            ? "marker"
            : user !== undefined && isSynthetic(user)
              ? "continue"
              : replayed.has(sourceMessageId)
                ? "replay"
                : undefined
        lines.push(tag === undefined ? { role: "user", text } : { role: "user", text, tag })
        break
      }
      case "assistant": {
        const pieces: Array<string> = []
        for (const c of message.content) {
          if (c.type === "text") pieces.push(oneLine(c.text))
          else if (c.type === "tool-call") pieces.push(`→ ${c.toolName} ${targetOf(c.input)}`.trim())
        }
        const summary = source?.role === "assistant" && source.summary === true
        lines.push(
          summary
            ? { role: "assistant", text: pieces.join(" · "), tag: "summary" }
            : { role: "assistant", text: pieces.join(" · ") },
        )
        break
      }
      case "tool":
        for (const result of message.content) {
          const output = result.output
          const value =
            output.type === "text" || output.type === "error-text" ? output.value : JSON.stringify(output.value)
          const first = oneLine(value.split("\n").find((line) => line.trim() !== "") ?? "")
          if (value === Render.CLEARED_TEXT)
            lines.push({ role: "tool", text: `${result.toolName}: ${value}`, tag: "pruned" })
          else
            lines.push({
              role: "tool",
              text: `${result.toolName}: ${first} (${lineCount(value.split("\n").length)}, ${count(Tokens.estimate(value))} tokens)`,
            })
        }
        break
    }
  }
  return { lines, messages: rendered.length, tokens: windowTokens(state.window) + settings.systemPromptTokens }
}
