/**
 * The messages of a drive-mode request in pivot's window order: OpenCode's own message where OpenCode passed it, and
 * where it did not — a pinned message from before OpenCode's compaction, which OpenCode no longer sends — pivot's
 * stored message in OpenCode's shape (`ToExport`). Messages OpenCode passed that pivot's window does not show are left
 * out when they are older than the newest one it shows (pivot pivoted past them), and kept, after the window, when
 * they are newer than all it shows (pivot has not recorded them yet). Pure; the objects returned are OpenCode's own or
 * new ones, never copies (`Drive.rewrite` copies).
 */
import type { Message } from "@pivot/core"
import { ToExport } from "@pivot/opencode"
import type { MessageWithParts } from "./OpenCode.ts"

/** `messages` (OpenCode's, in its order) arranged as pivot's `window` of session `sessionId` shows them. */
export const inWindowOrder = (
  messages: ReadonlyArray<MessageWithParts>,
  window: ReadonlyArray<Message.Message>,
  sessionId: string | undefined,
): Array<MessageWithParts> => {
  const shown = new Set(window.map((m) => String(m.id)))
  // The newest message pivot's window shows (OpenCode's ids sort by time): what it hides before that, it hid.
  const last = messages.findLastIndex((m) => shown.has(m.info.id))
  // Nothing in common (pivot has not recorded the session yet): OpenCode's messages as they are.
  if (last === -1 || sessionId === undefined) return [...messages]
  const passed = new Map(messages.map((m) => [m.info.id, m]))
  return [
    ...window.map((m) => passed.get(String(m.id)) ?? (ToExport.message(m, sessionId) as MessageWithParts)),
    ...messages.slice(last + 1),
  ]
}
