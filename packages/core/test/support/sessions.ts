/**
 * Generated sessions for property tests: a random script of agent-loop actions is run through the Decider, so every
 * generated event stream is one pivot could really have stored (turns, tool calls in every state, late tool results,
 * provider overflows, prunes, auto and manual compactions that finish, fail, replay or continue).
 */

import { type Commands, type Events, Ids, type Message, Session } from "@pivot/core"
import { Result } from "effect"
import fc from "fast-check"

type Command = Commands.Command
type Event = Events.Event

/** One step of a generated agent loop. */
export type Action =
  | { readonly kind: "user"; readonly text: number; readonly image: boolean }
  | {
      readonly kind: "step"
      readonly tools: ReadonlyArray<{ readonly tool: string; readonly size: number; readonly status: string }>
      readonly tokens: number
      readonly finish: "stop" | "tool-calls" | undefined
    }
  | { readonly kind: "toolResult"; readonly size: number }
  | { readonly kind: "prune" }
  | { readonly kind: "check" }
  | { readonly kind: "overflowError" }
  | {
      readonly kind: "compact"
      readonly auto: boolean
      readonly outcome: "finish" | "fail"
      readonly tailTurns: number
      readonly preserve: number | undefined
      readonly autoContinue: boolean
    }

const toolArb = fc.record({
  tool: fc.constantFrom("bash", "read", "edit", "grep", "skill"),
  // Mostly small outputs, sometimes big ones so that prune has work to do.
  size: fc.oneof(
    { weight: 3, arbitrary: fc.nat(400) },
    { weight: 2, arbitrary: fc.integer({ min: 30_000, max: 200_000 }) },
  ),
  status: fc.constantFrom("completed", "completed", "completed", "error", "pending", "running"),
})

/** One random action. */
export const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("user" as const), text: fc.nat(300), image: fc.boolean() }) },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("step" as const),
      tools: fc.array(toolArb, { maxLength: 3 }),
      tokens: fc.integer({ min: 0, max: 120_000 }),
      finish: fc.constantFrom("stop" as const, "tool-calls" as const, undefined),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("toolResult" as const), size: fc.nat(50_000) }) },
  { weight: 1, arbitrary: fc.constant({ kind: "prune" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "check" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "overflowError" as const }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("compact" as const),
      auto: fc.boolean(),
      outcome: fc.constantFrom("finish" as const, "finish" as const, "fail" as const),
      tailTurns: fc.nat(3),
      preserve: fc.option(fc.integer({ min: 0, max: 30_000 }), { nil: undefined }),
      autoContinue: fc.boolean(),
    }),
  },
)

/** A generated session: the commands decided in order and the events they caused. */
export interface Generated {
  readonly steps: ReadonlyArray<{
    readonly command: Command
    readonly before: Session.State
    readonly events: ReadonlyArray<Event>
  }>
  readonly events: ReadonlyArray<Event>
  readonly state: Session.State
}

export const LIMITS = { context: 100_000, output: 32_000 }
export const MODEL = { providerId: "test", modelId: "model" }

/** Runs a script through the Decider; commands the Decider refuses are kept out of the stream. */
export const run = (actions: ReadonlyArray<Action>): Generated => {
  let n = 0
  const at = () => ++n
  const msg = () => Ids.unsafe.message(`msg_${String(++n).padStart(8, "0")}`)
  const prt = () => Ids.unsafe.part(`prt_${String(++n).padStart(8, "0")}`)
  let state = Session.initialState
  const steps: Array<Generated["steps"][number]> = []
  const events: Array<Event> = []
  const apply = (command: Command): boolean => {
    const decision = Session.decide(command, state)
    if (Result.isFailure(decision)) return false
    steps.push({ command, before: state, events: decision.success })
    events.push(...decision.success)
    state = Session.fold(decision.success, state)
    return true
  }
  let lastUser: Message.UserMessage | undefined
  let lastAssistant: Message.AssistantMessage | undefined

  apply({ _tag: "StartSession", sessionId: Ids.unsafe.session("ses_generated"), at: at(), model: MODEL })
  for (const action of actions) {
    switch (action.kind) {
      case "user": {
        const parts: Array<Message.UserPart> = [{ type: "text", id: prt(), text: "u".repeat(action.text) }]
        if (action.image)
          parts.push({
            type: "file",
            id: prt(),
            mime: "image/png",
            filename: "shot.png",
            url: `data:image/png;base64,${"a".repeat(64)}`,
          })
        lastUser = { role: "user", id: msg(), createdAt: at(), parts }
        apply({ _tag: "AddUserMessage", message: lastUser })
        break
      }
      case "step": {
        if (!lastUser) break
        const parts: Array<Message.AssistantPart> = [{ type: "text", id: prt(), text: "a".repeat(40) }]
        for (const t of action.tools) {
          const input = { path: `/src/file${n}.ts` }
          const state: Message.ToolState =
            t.status === "completed"
              ? { status: "completed", input, output: "o".repeat(t.size), title: t.tool }
              : t.status === "error"
                ? { status: "error", input, error: "failed" }
                : t.status === "running"
                  ? { status: "running", input }
                  : { status: "pending", input }
          parts.push({ type: "tool", id: prt(), callId: `call_${n}`, tool: t.tool, state })
        }
        const message: Message.AssistantMessage = {
          role: "assistant",
          id: msg(),
          parentId: lastUser.id,
          createdAt: at(),
          model: MODEL,
          tokens: { input: action.tokens, output: 100, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
          parts,
          ...(action.finish === undefined ? {} : { finish: action.finish }),
        }
        if (apply({ _tag: "RecordAssistantStep", message, config: {}, limits: LIMITS })) lastAssistant = message
        break
      }
      case "toolResult": {
        const current = lastAssistant && Session.message(state, lastAssistant.id)
        const pending =
          current?.role !== "assistant"
            ? undefined
            : current.parts.find(
                (p) => p.type === "tool" && (p.state.status === "pending" || p.state.status === "running"),
              )
        if (!lastAssistant || pending?.type !== "tool") break
        apply({
          _tag: "RecordToolResult",
          at: at(),
          messageId: lastAssistant.id,
          partId: pending.id,
          state: {
            status: "completed",
            input: pending.state.input,
            output: "r".repeat(action.size),
            title: pending.tool,
          },
        })
        break
      }
      case "prune":
        apply({ _tag: "Prune", at: at() })
        break
      case "check":
        apply({ _tag: "CheckOverflow", at: at(), config: {}, limits: LIMITS })
        break
      case "overflowError": {
        if (!lastUser) break
        const message: Message.AssistantMessage = {
          role: "assistant",
          id: msg(),
          parentId: lastUser.id,
          createdAt: at(),
          model: MODEL,
          tokens: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
          parts: [],
        }
        if (
          apply({
            _tag: "ReportProviderError",
            at: at(),
            message,
            error: { name: "ContextOverflowError", message: "prompt is too long" },
          })
        ) {
          const markerId = msg()
          apply({ _tag: "CreateCompaction", at: at(), markerId, partId: prt(), auto: true, overflow: true })
        }
        break
      }
      case "compact": {
        const markerId = state.pending ?? msg()
        if (state.pending === undefined)
          apply({ _tag: "CreateCompaction", at: at(), markerId, partId: prt(), auto: action.auto })
        const config = {
          tail_turns: action.tailTurns,
          ...(action.preserve === undefined ? {} : { preserve_recent_tokens: action.preserve }),
        }
        apply({
          _tag: "ProcessCompaction",
          at: at(),
          markerId,
          summaryId: msg(),
          model: MODEL,
          compactionLimits: LIMITS,
          config,
        })
        if (action.outcome === "finish")
          apply({
            _tag: "FinishSummary",
            at: at(),
            markerId,
            partId: prt(),
            text: `summary ${n}`,
            tokens: { input: 1, output: 1, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
          })
        else apply({ _tag: "FailSummary", at: at(), markerId, error: { name: "APIError", message: "summariser down" } })
        const continued = apply({
          _tag: "Continue",
          at: at(),
          markerId,
          messageId: msg(),
          autoContinue: action.autoContinue,
        })
        if (continued) {
          const last = events[events.length - 1]
          if (last?._tag === "TurnReplayed" || last?._tag === "ContinueRequested") lastUser = last.message
        }
        break
      }
    }
  }
  return { steps, events, state }
}

/** Arbitrary generated sessions. */
export const generatedArb = (maxLength = 40): fc.Arbitrary<Generated> =>
  fc.array(actionArb, { minLength: 1, maxLength, size: "max" }).map(run)
