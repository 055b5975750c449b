/**
 * Drive mode: OpenCode's messages, as `experimental.chat.messages.transform` hands them over before a model call,
 * rewritten to pivot's window of the session. The rewrite works on a copy (OpenCode's stored messages and the objects
 * it passed are never changed) and is pure:
 *
 * - a tool output pivot's window shows pruned (`compactedAt`) carries pivot's placeholder, naming the recall id
 *   `context_recall` takes (`Render.clearedText`), whether OpenCode pruned it too or not;
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
  return Restore.inWindowOrder(messages, window, sessionOf(messages)).map((message) => {
    const copy = structuredClone(message) as MessageWithParts
    if (!message.parts.some((p) => p.type === "tool" && pruned.has(String(p.id)))) return copy
    return { ...copy, parts: copy.parts.map((p) => (p.type === "tool" && pruned.has(String(p.id)) ? cleared(p) : p)) }
  })
}

/** The session a transform's messages belong to (OpenCode passes no session id to the hook). */
export const sessionOf = (messages: ReadonlyArray<MessageWithParts>): string | undefined => {
  for (const message of messages) if (typeof message.info.sessionID === "string") return message.info.sessionID
  return undefined
}
