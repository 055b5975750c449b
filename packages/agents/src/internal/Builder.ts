/**
 * The event log an agent transcript becomes, built line by line: both readers (Claude Code, Codex CLI) call these
 * few operations, so the mapping onto pivot's events has one home. Each operation pushes the event pivot would have
 * recorded live and folds it into the session's state, so later lines see the window as it was then.
 */
import { type Events, Ids, Message, type Model, Session, Tokens, ValidWindow, Window } from "@pivot/core"
import { type Agent, type ImportResult, parseLine } from "../Transcript.ts"

const opt = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: V }

/** An id of the given kind derived from a line number and an optional suffix: sortable in file order, stable. */
export const lineId = (prefix: "msg" | "prt", line: number, suffix = ""): string =>
  `${prefix}_${line.toString(16).padStart(8, "0")}${suffix.replace(/[^0-9A-Za-z_-]/g, "").slice(0, 40)}`

interface ToolRef {
  readonly messageId: Ids.MessageId
  readonly partId: Ids.PartId
  readonly input: Readonly<Record<string, unknown>>
  readonly startedAt?: number | undefined
}

/** Accumulates a session's events and the import's report. */
export class Builder {
  readonly events: Array<Events.Event> = []
  state: Session.State = Session.initialState
  readonly warnings: Array<string> = []
  readonly dropped: Record<string, number> = {}
  readonly unknown: Record<string, number> = {}
  malformed = 0
  messages = 0
  parts = 0
  compactions = 0
  sessionId: Ids.SessionId | undefined
  private readonly tools = new Map<string, ToolRef>()
  /** The last user message (or marker) recorded: the parent of the next assistant step. */
  lastUser: Ids.MessageId | undefined

  readonly agent: Agent

  constructor(agent: Agent) {
    this.agent = agent
  }

  get started(): boolean {
    return this.sessionId !== undefined
  }

  count(into: "dropped" | "unknown", kind: string): void {
    this[into][kind] = (this[into][kind] ?? 0) + 1
  }

  private push(event: Events.Event): void {
    this.events.push(event)
    this.state = Session.evolve(this.state, event)
  }

  /** A line's JSON object: undefined for a blank line, and for a line that is not a JSON object, counted as malformed. */
  parse(number: number, raw: string): Readonly<Record<string, unknown>> | undefined {
    if (raw.trim() === "") return undefined
    const line = parseLine(raw)
    if (line === undefined) {
      this.malformed++
      this.warnings.push(`line ${number}: not a JSON object; skipped`)
    }
    return line
  }

  start(name: string, at: number, title?: string, model?: Model.ModelRef): void {
    const sessionId = Ids.sessionIdOf(`${this.agent}-${name}`) ?? Ids.unsafe.session(`ses_${this.agent}`)
    this.sessionId = sessionId
    this.push({ _tag: "SessionStarted", sessionId, at, ...opt("title", title), ...opt("model", model) })
  }

  user(message: Message.UserMessage): void {
    this.messages++
    this.parts += message.parts.length
    this.lastUser = message.id
    this.push({ _tag: "UserMessageAdded", at: message.createdAt, message })
  }

  /** Records one model call; its tool calls become known by call id for the results that follow. */
  step(message: Message.AssistantMessage, at: number): void {
    this.messages++
    this.parts += message.parts.length
    for (const part of message.parts)
      if (part.type === "tool")
        this.tools.set(part.callId, {
          messageId: message.id,
          partId: part.id,
          input: part.state.input,
          startedAt: part.state.status === "running" ? part.state.startedAt : undefined,
        })
    this.push({ _tag: "AssistantStepRecorded", at, message })
  }

  /** The parent of the next step: the last user message, or (before any) a stand-in named in a warning. */
  parentOf(where: string): Ids.MessageId {
    if (this.lastUser !== undefined) return this.lastUser
    this.warnings.push(`${where}: an answer before any user message; its parent is the session's first line`)
    return Ids.unsafe.message(lineId("msg", 0, "root"))
  }

  /** Whether a tool call of a recorded step waits for this call id. */
  hasTool(callId: string): boolean {
    return this.tools.has(callId)
  }

  /** A tool call of a recorded step got its result (or failed). Answers false when no recorded step made the call. */
  toolResult(callId: string, at: number, result: { readonly output: string } | { readonly error: string }): boolean {
    const ref = this.tools.get(callId)
    if (ref === undefined) return false
    this.tools.delete(callId)
    const state: Message.ToolCompleted | typeof Message.ToolError.Type =
      "output" in result
        ? {
            status: "completed",
            input: ref.input,
            output: result.output,
            ...opt("startedAt", ref.startedAt),
            endedAt: at,
          }
        : { status: "error", input: ref.input, error: result.error, ...opt("startedAt", ref.startedAt), endedAt: at }
    this.push({ _tag: "ToolResultRecorded", at, messageId: ref.messageId, partId: ref.partId, state })
    return true
  }

  /** The agent compacted: the marker pivot records for it. `auto`: the agent's own trigger, not the user's. */
  compactionRequested(markerId: Ids.MessageId, partId: Ids.PartId, at: number, auto: boolean): void {
    this.messages++
    this.parts++
    const marker: Message.UserMessage = {
      role: "user",
      id: markerId,
      createdAt: at,
      parts: [{ type: "compaction", id: partId, auto }],
    }
    this.lastUser = markerId
    this.push({ _tag: "CompactionRequested", at, marker, reason: auto ? "threshold" : "user" })
  }

  /**
   * The summary the agent wrote for the compaction `markerId` asked for: the compaction starts and finishes as one
   * pivot. The plan is the window at that moment: everything visible is head (summarised), nothing is kept verbatim
   * (`tail`) but what the agent says it kept (`keep`, ids of recorded messages in window order); the last finished
   * summary is `previousSummary`.
   */
  compactionFinished(input: {
    readonly markerId: Ids.MessageId
    readonly summaryId: Ids.MessageId
    readonly partId: Ids.PartId
    readonly at: number
    readonly text: string
    readonly model: Model.ModelRef
    readonly keep?: ReadonlySet<string>
    /** The usage of the call that wrote the summary, where the transcript records it (Codex). */
    readonly tokens?: Message.AssistantMessage["tokens"]
  }): void {
    const window = Window.messages(this.state.window)
    const markers = new Set(window.filter(Message.isMarker).map((m) => m.id))
    let previousSummary: string | undefined
    const hidden = new Set<string>([input.markerId])
    for (const m of window)
      if (Message.isFinishedSummary(m) && markers.has(m.parentId)) {
        hidden.add(m.id)
        hidden.add(m.parentId)
        previousSummary = Message.summaryText(m)
      }
    const history = window.filter((m) => !hidden.has(m.id) && !Message.isMarker(m))
    const keep = input.keep ?? new Set<string>()
    const tail = history.filter((m) => keep.has(m.id)).map((m) => m.id)
    const head = history.filter((m) => !keep.has(m.id)).map((m) => m.id)
    const summary: Message.AssistantMessage = {
      role: "assistant",
      id: input.summaryId,
      parentId: input.markerId,
      createdAt: input.at,
      completedAt: input.at,
      model: input.model,
      tokens: input.tokens ?? Tokens.zero,
      finish: "stop",
      summary: true,
      parts: [{ type: "text", id: input.partId, text: input.text }],
    }
    this.messages++
    this.parts++
    this.compactions++
    this.push({
      _tag: "CompactionStarted",
      at: input.at,
      markerId: input.markerId,
      summaryId: input.summaryId,
      model: input.model,
      plan: {
        head,
        tail,
        ...opt("tailStartId", tail[0]),
        ...opt("previousSummary", previousSummary),
      },
      prompt: "",
    })
    this.push({ _tag: "SummaryFinished", at: input.at, markerId: input.markerId, summary })
  }

  result(split: { readonly lines: number; readonly consumed: number; readonly waiting: number }): ImportResult {
    const repaired = ValidWindow.violations(this.state.window).filter((v) => v.rule !== "empty-input")
    const warnings = [
      ...this.warnings,
      ...repaired.map((v) => `window: ${ValidWindow.format(v)}; repaired before it is sent`),
    ]
    return {
      sessionId: this.sessionId ?? Ids.unsafe.session(`ses_${this.agent}`),
      events: this.events,
      report: {
        agent: this.agent,
        lines: split.lines,
        consumed: split.consumed,
        waiting: split.waiting,
        messages: this.messages,
        parts: this.parts,
        window: this.state.window.visible.length,
        compactions: this.compactions,
        dropped: this.dropped,
        unknown: this.unknown,
        malformed: this.malformed,
        warnings,
        repaired,
      },
    }
  }
}

/** Milliseconds of an ISO timestamp, or the fallback when it is missing or unreadable. */
export const millis = (value: unknown, fallback: number): number => {
  if (typeof value !== "string") return fallback
  const t = Date.parse(value)
  return Number.isFinite(t) ? t : fallback
}

export const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

export const num = (u: unknown): number => (typeof u === "number" && Number.isFinite(u) && u > 0 ? u : 0)

export { opt }
