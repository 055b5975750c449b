/**
 * Plays an example session through the session Decider, as an agent loop with a scripted model and summariser would:
 * each user turn, each model call with its measured usage (checked against the model's limits, so the core reports
 * overflows), an automatic compaction after every overflow (the next canned summary), the continue message when the
 * agent was mid-task, and a prune when the agent hands the turn back to the user. Ids and time come from counters,
 * so the same example always yields the same events.
 */
import {
  type Commands,
  type Config,
  type Events,
  Ids,
  type Message,
  type Model,
  Prompt,
  Session,
  SummaryInput,
  Tokens,
} from "@pivot/core"
import { Result } from "effect"
import type { Example, Step, ToolCall } from "./Example.ts"
import { summaryText, toolInput } from "./Example.ts"
import { expand } from "./Expand.ts"
import { inputTokens, outputTokens, reasoningTokens } from "./Usage.ts"

type Event = Events.Event
type Command = Commands.Command

/** The events of one played session and the state they fold to. */
export interface Played {
  readonly events: ReadonlyArray<Event>
  readonly state: Session.State
}

/** The deterministic clock's start: 2026-03-02 09:00:00 UTC. */
export const START = Date.UTC(2026, 2, 2, 9, 0, 0)

/** The agent name OpenCode gives its default coding agent. */
const AGENT = "build"

/** Compactions the driver runs for one user turn before it lets the turn stop (OpenCode has no such bound). */
export const MAX_COMPACTIONS_PER_TURN = 2

/** The summariser's error when the example has no canned summary left: the compaction fails and forms no pivot. */
export const NO_SUMMARY_LEFT = "the example has no canned summary left for this compaction"

/** Sequential ids `<prefix>_00000001`, one counter for all kinds, so ids sort in creation order (as `layerSequential`). */
const sequence = () => {
  let n = 0
  const next = (prefix: string) => `${prefix}_${String(++n).padStart(8, "0")}`
  return {
    message: () => Ids.unsafe.message(next("msg")),
    part: () => Ids.unsafe.part(next("prt")),
    call: () => next("call"),
  }
}

/** The tool's completed or failed state; outputs described compactly are expanded here. */
const toolState = (call: ToolCall, at: number): Message.ToolState => {
  const input = toolInput(call.input)
  const title = [input.filePath, input.pattern, input.description, input.command].find((v) => typeof v === "string")
  const times = { startedAt: at, endedAt: at + 150 }
  if (call.error !== undefined) return { status: "error", input, error: call.error, ...times }
  const output = typeof call.output === "string" ? call.output : expand(call.tool, input, call.output!)
  return {
    status: "completed",
    input,
    output,
    title: typeof title === "string" ? title : call.tool,
    metadata: { lines: output.split("\n").length },
    ...times,
  }
}

/**
 * Plays `example` and returns every event, in order. Throws if the core refuses a command: the driver only sends
 * commands that are valid in the current state, so a refusal is a bug, not a property of the example.
 */
export const play = (example: Example): Played => {
  const ids = sequence()
  const model: Model.ModelRef = { providerId: example.model.providerId, modelId: example.model.modelId }
  const limits = example.model.limits
  const config: Config.CompactionConfig = example.config
  const pruneOn = config.prune === true
  // A prompt longer than this is refused by the provider.
  const contextLimit = limits.input || limits.context
  let clock = START
  /** Moves the clock on by `ms` and answers the new time. */
  const tick = (ms: number): number => {
    clock += ms
    return clock
  }
  let state = Session.initialState
  let summariesUsed = 0
  const events: Array<Event> = []

  const apply = (command: Command): ReadonlyArray<Event> => {
    const decision = Session.decide(command, state)
    if (Result.isFailure(decision))
      throw new Error(`the core refused ${command._tag}: ${decision.failure._tag} (a bug in the demo driver)`)
    events.push(...decision.success)
    state = Session.fold(decision.success, state)
    return decision.success
  }

  /** The scripted summariser: its usage is measured on the exact input the compaction recorded. */
  const summarise = (started: Extract<Event, { readonly _tag: "CompactionStarted" }>) => {
    const messages = SummaryInput.summarizerMessages(
      { ...started.plan, parentId: started.markerId },
      (id) => Session.message(state, id),
      started.prompt,
    )
    const input = Tokens.estimate(Prompt.SYSTEM_PROMPT) + Tokens.estimate(JSON.stringify(messages))
    const lines = example.summaries[summariesUsed++]
    return lines === undefined ? undefined : { text: summaryText(lines), input }
  }

  /**
   * An automatic compaction after an overflow (spec §2.8). Answers the user message the agent goes on from: the
   * continue message, or the overflowing turn replayed after a provider rejection; none when the agent stops.
   */
  const compact = (
    overflow: boolean,
    midTask: boolean,
  ): { readonly message: Message.UserMessage; readonly replayed: boolean } | undefined => {
    const markerId = ids.message()
    apply({
      _tag: "CreateCompaction",
      at: tick(200),
      markerId,
      partId: ids.part(),
      auto: true,
      overflow,
      agent: AGENT,
      model,
    })
    const [started] = apply({
      _tag: "ProcessCompaction",
      at: tick(100),
      markerId,
      summaryId: ids.message(),
      model,
      compactionLimits: limits,
      config,
    })
    const summary = started?._tag === "CompactionStarted" ? summarise(started) : undefined
    if (summary === undefined) {
      apply({
        _tag: "FailSummary",
        at: tick(500),
        markerId,
        error: { name: "SummarizerError", message: NO_SUMMARY_LEFT },
      })
      return undefined
    }
    const output = Tokens.estimate(summary.text)
    apply({
      _tag: "FinishSummary",
      at: tick(4_000 + output * 15),
      markerId,
      partId: ids.part(),
      text: summary.text,
      tokens: { ...Tokens.zero, input: summary.input, output },
      finish: "stop",
    })
    // Only a turn the agent was in the middle of goes on by itself; after a finished turn it waits for the user.
    const [next] = apply({
      _tag: "Continue",
      at: tick(100),
      markerId,
      messageId: ids.message(),
      autoContinue: midTask,
    })
    if (next?._tag === "TurnReplayed") return { message: next.message, replayed: true }
    if (next?._tag === "ContinueRequested") return { message: next.message, replayed: false }
    return undefined
  }

  const assistantStep = (step: Step, parentId: Ids.MessageId, input: number): Message.AssistantMessage => {
    const id = ids.message()
    const calls = step.tools ?? []
    const createdAt = clock
    const inputs = calls.map((call) => toolInput(call.input))
    const tokens = {
      ...Tokens.zero,
      input,
      output: outputTokens(step, inputs),
      reasoning: reasoningTokens(step),
    }
    tick(1_500 + (tokens.output + tokens.reasoning) * 12)
    const parts: Array<Message.AssistantPart> = [{ type: "step-start", id: ids.part() }]
    if (step.reasoning !== undefined) parts.push({ type: "reasoning", id: ids.part(), text: step.reasoning })
    if (step.text !== undefined) parts.push({ type: "text", id: ids.part(), text: step.text })
    for (const call of calls) {
      const result = toolState(call, clock)
      tick(400)
      parts.push({ type: "tool", id: ids.part(), callId: ids.call(), tool: call.tool, state: result })
    }
    const finish = calls.length > 0 ? "tool-calls" : "stop"
    parts.push({ type: "step-finish", id: ids.part(), reason: finish, tokens })
    return {
      role: "assistant",
      id,
      parentId,
      createdAt,
      completedAt: clock,
      model,
      agent: AGENT,
      mode: AGENT,
      tokens,
      finish,
      parts,
    }
  }

  apply({ _tag: "StartSession", sessionId: Ids.unsafe.session("ses_demo"), at: clock, title: example.title, model })
  for (const turn of example.turns) {
    const user: Message.UserMessage = {
      role: "user",
      id: ids.message(),
      createdAt: tick(45_000),
      agent: AGENT,
      model,
      parts: [{ type: "text", id: ids.part(), text: turn.user }],
    }
    apply({ _tag: "AddUserMessage", message: user })
    let parent = user.id
    let compactions = 0
    let next = 0
    while (next < turn.steps.length) {
      const step = turn.steps[next]!
      const input = inputTokens(state.window, example.systemPromptTokens)
      if (input > contextLimit) {
        // The request does not fit the model at all: the provider rejects it and nothing is generated (spec §2.5).
        const rejected = apply({
          _tag: "ReportProviderError",
          at: tick(800),
          message: {
            role: "assistant",
            id: ids.message(),
            parentId: parent,
            createdAt: clock,
            model,
            agent: AGENT,
            mode: AGENT,
            tokens: Tokens.zero,
            parts: [],
          },
          error: {
            name: "ContextOverflowError",
            message: `prompt is too long: ${input} tokens > ${contextLimit} maximum`,
          },
          config,
        })
        if (!rejected.some((event) => event._tag === "OverflowDetected") || compactions >= MAX_COMPACTIONS_PER_TURN)
          break
        compactions++
        const resumed = compact(true, true)
        if (resumed === undefined) break
        parent = resumed.message.id
        // A replayed turn starts over: the scripted model answers the request again from its first step.
        if (resumed.replayed) next = 0
        continue
      }
      const message = assistantStep(step, parent, input)
      const recorded = apply({ _tag: "RecordAssistantStep", message, config, limits })
      next++
      if (recorded.some((event) => event._tag === "OverflowDetected") && compactions < MAX_COMPACTIONS_PER_TURN) {
        compactions++
        const resumed = compact(false, message.finish === "tool-calls")
        if (resumed !== undefined) parent = resumed.message.id
      }
    }
    if (pruneOn) apply({ _tag: "Prune", at: tick(50), ...example.pruneThresholds })
  }
  return { events, state }
}
