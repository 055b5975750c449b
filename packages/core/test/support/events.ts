/** Readable builders of messages and events for decider and window tests (ids like `msg_u1`, `prt_u1`). */
import { type Events, Ids, type Message, Tokens } from "@pivot/core"

type Event = Events.Event
const msg = Ids.unsafe.message
const prt = Ids.unsafe.part

export const SESSION = Ids.unsafe.session("ses_test")
export const MODEL = { providerId: "anthropic", modelId: "claude-test" } as const

export const started = (): Event => ({ _tag: "SessionStarted", sessionId: SESSION, at: 0, model: MODEL })

let clock = 1
const tick = () => clock++

/** A user message with one text part. */
export const userMessage = (
  id: string,
  text: string,
  extra: Partial<Message.UserMessage> = {},
): Message.UserMessage => ({
  role: "user",
  id: msg(`msg_${id}`),
  createdAt: tick(),
  parts: [{ type: "text", id: prt(`prt_${id}`), text }],
  ...extra,
})

/** The event adding a user message. */
export const user = (id: string, text: string, extra: Partial<Message.UserMessage> = {}): Event => {
  const message = userMessage(id, text, extra)
  return { _tag: "UserMessageAdded", at: message.createdAt, message }
}

/** A finished assistant step with one text part. */
export const assistantMessage = (
  id: string,
  parent: string,
  parts: ReadonlyArray<Message.AssistantPart> | string = "ok",
  extra: Partial<Message.AssistantMessage> = {},
): Message.AssistantMessage => ({
  role: "assistant",
  id: msg(`msg_${id}`),
  parentId: msg(`msg_${parent}`),
  createdAt: tick(),
  model: MODEL,
  tokens: Tokens.zero,
  finish: "stop",
  parts: typeof parts === "string" ? [{ type: "text", id: prt(`prt_${id}`), text: parts }] : parts,
  ...extra,
})

/** The event recording an assistant step. */
export const assistant = (
  id: string,
  parent: string,
  parts: ReadonlyArray<Message.AssistantPart> | string = "ok",
  extra: Partial<Message.AssistantMessage> = {},
): Event => {
  const message = assistantMessage(id, parent, parts, extra)
  return { _tag: "AssistantStepRecorded", at: message.createdAt, message }
}

/** A completed tool part. */
export const toolPart = (id: string, tool: string, output: string, compactedAt?: number): Message.AssistantPart => ({
  type: "tool",
  id: prt(`prt_${id}`),
  callId: `call_${id}`,
  tool,
  state: {
    status: "completed",
    input: { command: "ls" },
    output,
    title: tool,
    ...(compactedAt === undefined ? {} : { compactedAt }),
  },
})

/** The marker request event. */
export const marker = (id: string, auto = false, overflow?: boolean): Event => ({
  _tag: "CompactionRequested",
  at: tick(),
  marker: {
    role: "user",
    id: msg(`msg_${id}`),
    createdAt: clock,
    parts: [
      overflow === undefined
        ? { type: "compaction", id: prt(`prt_${id}`), auto }
        : { type: "compaction", id: prt(`prt_${id}`), auto, overflow },
    ],
  },
})

/** A compaction start with an explicit plan. */
export const compactionStarted = (
  markerId: string,
  summaryId: string,
  plan: Partial<Events.CompactionPlan> = {},
): Event => ({
  _tag: "CompactionStarted",
  at: tick(),
  markerId: msg(`msg_${markerId}`),
  summaryId: msg(`msg_${summaryId}`),
  model: MODEL,
  plan: { head: [], tail: [], ...plan },
  prompt: "summarise",
})

/** A finished summary event. */
export const summaryFinished = (markerId: string, summaryId: string, text = "summary"): Event => ({
  _tag: "SummaryFinished",
  at: tick(),
  markerId: msg(`msg_${markerId}`),
  summary: assistantMessage(summaryId, markerId, text, { summary: true, agent: "compaction", mode: "compaction" }),
})

export const id = msg
export const part = prt
