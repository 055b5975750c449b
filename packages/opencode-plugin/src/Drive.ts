/**
 * Drive mode: OpenCode's messages, as `experimental.chat.messages.transform` hands them over before a model call,
 * rewritten to pivot's window of the session. The rewrite works on a copy (OpenCode's stored messages and the objects
 * it passed are never changed) and is pure:
 *
 * - a tool output pivot's window shows pruned (`compactedAt`) carries pivot's placeholder, naming the recall id
 *   `context_recall` takes (`Render.clearedText`), whether OpenCode pruned it too or not;
 * - a tool input pivot's window shows cleared (`inputClearedAt`, ADR 0030) becomes pivot's cleared input
 *   (`Render.clearedInput`, its placeholder naming `prt_…-input`); OpenCode has no such state, so only pivot clears one;
 * - a message pivot's window does not show, older than the newest one it does (pivot pivoted past it, or its pivot
 *   keeps one summary where OpenCode shows two: deviation 2 of docs/parity.md), is left out; one newer than all it
 *   shows is kept (pivot has not decided anything about it);
 * - a message pivot's window shows and OpenCode did not pass (a pin from before OpenCode's compaction) is put in, at
 *   its place in pivot's window, built from pivot's stored message (`Restore`);
 * - everything else is OpenCode's, as it was.
 *
 * Today pivot's window of an OpenCode session is the import of what OpenCode did, so the rewrite changes only the
 * placeholders; pivot's own prune and compaction decisions (its strategies) flow through it once it records them.
 */
import { type Message, Render } from "@pivot/core"
import type { MessageWithParts } from "./OpenCode.ts"
import * as Restore from "./Restore.ts"

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** The tool parts pivot's window shows pruned, by part id. */
const prunedParts = (window: ReadonlyArray<Message.Message>): ReadonlySet<string> => {
  const ids = new Set<string>()
  for (const message of window)
    if (message.role === "assistant")
      for (const part of message.parts)
        if (part.type === "tool" && part.state.status === "completed" && part.state.compactedAt !== undefined)
          ids.add(part.id)
  return ids
}

/** The tool inputs pivot's window shows cleared, by part id: the input the model sees instead. */
const clearedInputs = (window: ReadonlyArray<Message.Message>): ReadonlyMap<string, Record<string, unknown>> => {
  const inputs = new Map<string, Record<string, unknown>>()
  for (const message of window)
    if (message.role === "assistant")
      for (const part of message.parts)
        if (part.type === "tool" && "inputClearedAt" in part.state && part.state.inputClearedAt !== undefined)
          inputs.set(part.id, Render.clearedInput(part.state.input, Render.inputRecallId(part.id)))
  return inputs
}

/** A tool part with `input` as its state's input (a copy), or the part itself when there is none. */
const withInput = (part: MessageWithParts["parts"][number], input: Record<string, unknown> | undefined) =>
  input === undefined ? part : { ...part, state: { ...(isRecord(part.state) ? part.state : {}), input } }

/** A tool part showing pivot's placeholder instead of its output (a copy). */
const cleared = (part: MessageWithParts["parts"][number]): MessageWithParts["parts"][number] => {
  const state = isRecord(part.state) ? part.state : {}
  const time = isRecord(state.time) ? { ...state.time } : {}
  // OpenCode renders a part with `time.compacted` as its own placeholder, without the recall id: pivot's is the output.
  delete time.compacted
  const { attachments: _, ...rest } = state
  return { ...part, state: { ...rest, time, output: Render.clearedText(String(part.id)) } }
}

/**
 * OpenCode's `messages` rewritten to pivot's `window` of the same session (`Window.messages`), as new objects:
 * neither argument is changed.
 */
export const rewrite = (
  messages: ReadonlyArray<MessageWithParts>,
  window: ReadonlyArray<Message.Message>,
): Array<MessageWithParts> => {
  const pruned = prunedParts(window)
  const inputs = clearedInputs(window)
  const touched = (p: MessageWithParts["parts"][number]) =>
    p.type === "tool" && (pruned.has(String(p.id)) || inputs.has(String(p.id)))
  const rewritten = (p: MessageWithParts["parts"][number]) =>
    withInput(pruned.has(String(p.id)) ? cleared(p) : p, inputs.get(String(p.id)))
  return Restore.inWindowOrder(messages, window, sessionOf(messages)).map((message) => {
    const copy = structuredClone(message) as MessageWithParts
    if (!message.parts.some(touched)) return copy
    return { ...copy, parts: copy.parts.map((p) => (touched(p) ? rewritten(p) : p)) }
  })
}

/** The session a transform's messages belong to (OpenCode passes no session id to the hook). */
export const sessionOf = (messages: ReadonlyArray<MessageWithParts>): string | undefined => {
  for (const message of messages) if (typeof message.info.sessionID === "string") return message.info.sessionID
  return undefined
}

/** The id suffix of the HUD's message and part (`withHud`): derived from the newest message, so one request has one. */
export const HUD_SUFFIX = "_pivothud"

/**
 * `messages` with the usage HUD as one more user message at the end (a new array; the messages are not copied or
 * changed): a synthetic text part holding `hud`, in a message shaped as the newest user message (its session, agent
 * and model), with an id that sorts after every message in `messages`.
 *
 * At the end, the HUD leaves the prefix a provider cached alone: OpenCode's Anthropic breakpoints (the first two
 * system messages, the last two others) fall on the HUD and the message before it, so the next request reads the
 * whole conversation from the cache again and only the HUD's few tokens are new. In the system prompt, its numbers
 * change with every call and the whole prompt was written to the cache again each time. Nothing is added without a
 * user message to shape it on.
 */
export const withHud = (messages: ReadonlyArray<MessageWithParts>, hud: string): Array<MessageWithParts> => {
  const user = messages.findLast((m) => m.info.role === "user")
  const newest = messages.at(-1)
  if (user === undefined || newest === undefined) return [...messages]
  const id = `${newest.info.id}${HUD_SUFFIX}`
  const time = { created: isRecord(newest.info.time) ? newest.info.time.created : undefined }
  const info = { ...user.info, id, time }
  const part = {
    id: `prt${id}`,
    sessionID: user.info.sessionID,
    messageID: id,
    type: "text",
    text: hud,
    synthetic: true,
  }
  return [...messages, { info, parts: [part] }]
}

/**
 * The longest tool input value OpenCode's summariser reads whole: OpenCode 1.18.33 cuts every tool *output* in its
 * summariser's history to 2,000 characters (`toolOutputMaxChars` of its compaction), and pivot cuts the inputs the
 * same way (`forSummariser`).
 */
export const SUMMARY_INPUT_MAX_CHARS = 2_000

/** A string input value longer than the cap, cut to it with a note of what was left out and where it is. */
const cut = (value: string, recallId: string): string =>
  `${value.slice(0, SUMMARY_INPUT_MAX_CHARS)}\n[Tool input truncated for compaction: omitted ${value.length - SUMMARY_INPUT_MAX_CHARS} chars — recall id: ${recallId}]`

const longValue = (value: unknown): value is string =>
  typeof value === "string" && value.length > SUMMARY_INPUT_MAX_CHARS

/** Whether a part is a tool call with an input value the summariser would not read whole. */
const longInput = (part: MessageWithParts["parts"][number]): boolean =>
  part.type === "tool" &&
  isRecord(part.state) &&
  isRecord(part.state.input) &&
  Object.values(part.state.input).some(longValue)

/**
 * The history OpenCode's summariser reads under drive (pivot's window, `rewrite`), with every tool input's string
 * values cut to `SUMMARY_INPUT_MAX_CHARS` — what OpenCode itself does to the outputs there, done to the inputs it
 * leaves whole (a file `write`'s content, an `edit`'s strings). The summariser writes a summary, not the file: the
 * first 2,000 characters and the recall id (`context_recall` gives the whole input back, byte for byte) are what its
 * summary can use, as for an output. A new array; messages without a long input are passed as they are. Only the
 * summariser's history: an agent request is pivot's window, unchanged.
 */
export const forSummariser = (messages: ReadonlyArray<MessageWithParts>): Array<MessageWithParts> =>
  messages.map((message) =>
    !message.parts.some(longInput)
      ? message
      : {
          ...message,
          parts: message.parts.map((part) => {
            if (!longInput(part)) return part
            const state = part.state as Record<string, unknown>
            const input = state.input as Record<string, unknown>
            const recallId = Render.inputRecallId(String(part.id))
            const clipped = Object.fromEntries(
              Object.entries(input).map(([key, value]) => [key, longValue(value) ? cut(value, recallId) : value]),
            )
            return { ...part, state: { ...state, input: clipped } }
          }),
        },
  )
