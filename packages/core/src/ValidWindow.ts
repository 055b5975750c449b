/**
 * The window is a valid model input: the one home of the rules every model input pivot sends must satisfy, a checker
 * that names the message and the rule it breaks, and the deterministic repair applied before anything is sent.
 *
 * Rules over the stored window (`orderViolations`):
 * - `order`: without a pivot the messages are in recorded order; with one, the marker and its summary come first and
 *   everything after them is in recorded order; no message twice, none unknown;
 * - `pivot`: the pivot's summary is a finished, error-free summary and its marker is a marker;
 * - `missing`: every message recorded after the pivot's marker is visible (nothing after the pivot is lost).
 *
 * Rules over the rendered input (`inputViolations`), as the AI SDK's providers require them:
 * - `empty-input`: at least one message; `empty-content`: no message with an empty content array; `empty-text`: no
 *   empty text part (providers reject empty text blocks);
 * - `first-not-user`: the conversation starts with a user message;
 * - `orphan-result`: every tool result answers a call of the assistant message directly before its tool message
 *   (provider-executed results: a call in their own message); `unanswered-call`: every call is answered there, by its
 *   result or by the interrupted placeholder; `duplicate-call`: no call id is used twice in the window.
 * Runs of user messages or of assistant messages are allowed: the providers that need strict alternation (Anthropic,
 * Bedrock) have the AI SDK merge a run into one message; a tool message only ever sits right after its assistant.
 *
 * The repair (`repair`) is deterministic and never drops conversation: empty text parts are dropped; a tool result
 * that answers no open call of the assistant right before it (or repeats one) is dropped; a call left open gets the
 * interrupted placeholder as its result; a call whose id was already used earlier in the window is dropped with its
 * result; messages left with no content are dropped; and an input that would not start with a user message (a
 * truncated history) starts with `HISTORY_START_TEXT` as a user message.
 */
import * as Conversation from "./Conversation.ts"
import type { MessageId } from "./Ids.ts"
import * as Seq from "./internal/Seq.ts"
import { isFinishedSummary, isMarker, type Message } from "./Message.ts"
import type * as MM from "./ModelMessage.ts"
import * as Render from "./Render.ts"
import type * as Window from "./Window.ts"

/** Which rule a violation breaks. */
export type Rule =
  | "order"
  | "pivot"
  | "missing"
  | "empty-input"
  | "empty-content"
  | "empty-text"
  | "first-not-user"
  | "orphan-result"
  | "unanswered-call"
  | "duplicate-call"

/** One broken rule: which stored message it concerns (none for the input as a whole) and why. */
export interface Violation {
  readonly rule: Rule
  readonly messageId?: MessageId | undefined
  readonly reason: string
}

/** The user text the repair puts first when a window would start with an answer (a truncated history). */
export const HISTORY_START_TEXT = "[The conversation before this point is not available]"

const violation = (rule: Rule, messageId: MessageId | undefined, reason: string): Violation =>
  messageId === undefined ? { rule, reason } : { rule, messageId, reason }

/** A violation as one line: `msg_…: reason (rule)`. */
export const format = (v: Violation): string => `${v.messageId ?? "window"}: ${v.reason} (${v.rule})`

/** Violations of the stored window's rules: recorded order, the pivot pair at the front, nothing after it lost. */
export const orderViolations = (state: Window.State): Array<Violation> => {
  const out: Array<Violation> = []
  const order = Seq.toArray(state.conversation.order)
  const position = new Map(order.map((id, i) => [id, i]))
  const visible = Seq.toArray(state.visible)
  const seen = new Set<MessageId>()
  let rest = visible
  const pivot = state.pivot
  if (pivot !== undefined) {
    if (visible[0] !== pivot.markerId || visible[1] !== pivot.summaryId)
      out.push(
        violation(
          "order",
          visible[0],
          `the window does not start with the pivot ${pivot.markerId}, ${pivot.summaryId}`,
        ),
      )
    const marker = Conversation.get(state.conversation, pivot.markerId)
    const summary = Conversation.get(state.conversation, pivot.summaryId)
    if (marker === undefined || !isMarker(marker))
      out.push(violation("pivot", pivot.markerId, "the pivot's marker is not a compaction marker"))
    if (summary === undefined || !isFinishedSummary(summary) || summary.parentId !== pivot.markerId)
      out.push(
        violation("pivot", pivot.summaryId, "the pivot's summary is not a finished, error-free summary of its marker"),
      )
    rest = visible.filter((id) => id !== pivot.markerId && id !== pivot.summaryId)
    seen.add(pivot.markerId).add(pivot.summaryId)
  }
  let last = -1
  let lastId: MessageId | undefined
  for (const id of rest) {
    const at = position.get(id)
    if (at === undefined) out.push(violation("order", id, "the window shows a message that was never recorded"))
    else if (seen.has(id)) out.push(violation("order", id, "the window shows this message twice"))
    else if (at < last) out.push(violation("order", id, `recorded before ${lastId}, but shown after it`))
    else {
      last = at
      lastId = id
    }
    seen.add(id)
  }
  if (pivot !== undefined) {
    const markerAt = position.get(pivot.markerId) ?? order.length
    const shown = new Set(visible)
    for (let i = markerAt + 1; i < order.length; i++)
      if (!shown.has(order[i]!))
        out.push(violation("missing", order[i], "recorded after the pivot's marker but not shown"))
  }
  return out
}

const isEmptyText = (part: { readonly type: string; readonly text?: string }) =>
  part.type === "text" && part.text === ""

/**
 * The input rules' check as a scan that can be resumed: `add` each rendered message in order, `violations` says what
 * the messages added so far break (as `inputViolations` of them would), and more can be added afterwards. What
 * `IncrementalWindow` checks a step's new messages with, without scanning the window again.
 */
export interface InputCheck {
  readonly add: (rendered: Render.Rendered) => void
  /** The violations of everything added so far; adding more afterwards goes on from where the scan stopped. */
  readonly violations: () => Array<Violation>
  /** Whether what was added so far breaks no rule (ignoring `empty-input`), cheaper than `violations`. */
  readonly clean: () => boolean
}

/** A fresh resumable check of the input rules (see `InputCheck`). */
export const inputCheck = (): InputCheck => {
  const out: Array<Violation> = []
  let added = 0
  let first = true
  const used = new Set<string>()
  // Calls of the latest assistant message still waiting for a result in the tool message right after it.
  let open: { readonly source: MessageId; readonly calls: Set<string> } | undefined
  const unanswered = (o: NonNullable<typeof open>) =>
    [...o.calls].map((call) =>
      violation("unanswered-call", o.source, `tool call ${call} has no result right after its message`),
    )
  const closeOpen = () => {
    if (open !== undefined) out.push(...unanswered(open))
    open = undefined
  }
  const add = ({ sourceMessageId: source, message }: Render.Rendered) => {
    added++
    if (message.role === "system") return
    if (first) {
      first = false
      if (message.role !== "user")
        out.push(
          violation(
            "first-not-user",
            source,
            `the input starts with ${message.role === "assistant" ? "an" : "a"} ${message.role} message`,
          ),
        )
    }
    if (message.content.length === 0)
      out.push(violation("empty-content", source, `a ${message.role} message with no content`))
    for (const part of message.content as ReadonlyArray<{ readonly type: string; readonly text?: string }>)
      if (isEmptyText(part))
        out.push(violation("empty-text", source, `a ${message.role} message with an empty text part`))
    if (message.role === "tool") {
      for (const result of message.content) {
        if (open?.calls.delete(result.toolCallId) === true) continue
        out.push(violation("orphan-result", source, `tool result ${result.toolCallId} answers no open call before it`))
      }
      return
    }
    closeOpen()
    if (message.role !== "assistant") return
    const calls = new Set<string>()
    const provider = new Set<string>()
    for (const part of message.content) {
      if (part.type === "tool-call") {
        if (used.has(part.toolCallId))
          out.push(violation("duplicate-call", source, `tool call id ${part.toolCallId} is used twice in the window`))
        used.add(part.toolCallId)
        if (part.providerExecuted === true) provider.add(part.toolCallId)
        else calls.add(part.toolCallId)
      } else if (part.type === "tool-result" && !provider.delete(part.toolCallId))
        out.push(violation("orphan-result", source, `tool result ${part.toolCallId} answers no provider-executed call`))
    }
    for (const call of provider)
      out.push(violation("unanswered-call", source, `provider-executed tool call ${call} has no result`))
    open = calls.size > 0 ? { source, calls } : undefined
  }
  return {
    add,
    // Calls still open at the end are unanswered, but a later `add` of their tool message may still answer them.
    violations: () =>
      added === 0
        ? [violation("empty-input", undefined, "the model input has no message")]
        : [...out, ...(open === undefined ? [] : unanswered(open))],
    clean: () => out.length === 0 && (open === undefined || open.calls.size === 0),
  }
}

/**
 * Whether the input check cannot tell two renderings of one message apart: the same roles, and part by part the same
 * types, call ids, provider execution and empty texts (what `inputCheck` reads). A pruned output is such a change.
 */
export const sameForCheck = (a: ReadonlyArray<Render.Rendered>, b: ReadonlyArray<Render.Rendered>): boolean => {
  if (a.length !== b.length) return false
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!.message
    const y = b[i]!.message
    if (x.role !== y.role || typeof x.content !== typeof y.content || x.content.length !== y.content.length)
      return false
    if (typeof x.content === "string") {
      if (x.content !== y.content) return false
      continue
    }
    for (let j = 0; j < x.content.length; j++) {
      const p = x.content[j] as CheckedPart
      const q = y.content[j] as CheckedPart
      if (p.type !== q.type || p.toolCallId !== q.toolCallId || isEmptyText(p) !== isEmptyText(q)) return false
      if (p.providerExecuted !== q.providerExecuted) return false
    }
  }
  return true
}

/** What the input check reads of a part. */
interface CheckedPart {
  readonly type: string
  readonly text?: string
  readonly toolCallId?: string
  readonly providerExecuted?: boolean
}

/** Violations of the rendered input's rules (see the module comment). */
export const inputViolations = (rendered: ReadonlyArray<Render.Rendered>): Array<Violation> => {
  const check = inputCheck()
  for (const r of rendered) check.add(r)
  return check.violations()
}

const visibleMessages = (state: Window.State): Array<Message> =>
  Seq.toArray(state.visible).map((id) => Conversation.get(state.conversation, id)!)

/** The input's violations plus the stored window's, before any repair (what the window would send unrepaired). */
export const violations = (state: Window.State, options?: Render.Options): Array<Violation> => [
  ...orderViolations(state),
  ...inputViolations(Render.render(visibleMessages(state), options)),
]

type AssistantContent = MM.AssistantModelMessage["content"][number]

const interrupted = (call: MM.ToolCallPart): MM.ToolResultPart => ({
  type: "tool-result",
  toolCallId: call.toolCallId,
  toolName: call.toolName,
  output: { type: "error-text", value: Render.INTERRUPTED_TEXT },
})

/** A repaired input and what the repair changed, one violation per change. */
export interface Repaired {
  readonly rendered: ReadonlyArray<Render.Rendered>
  readonly repaired: ReadonlyArray<Violation>
}

/** Repairs a rendered input deterministically (see the module comment); a valid input comes back unchanged. */
export const repair = (rendered: ReadonlyArray<Render.Rendered>): Repaired => {
  // An empty input has nothing to repair; it is only ever sent for an empty session.
  const found = inputViolations(rendered).filter((v) => v.rule !== "empty-input")
  if (found.length === 0) return { rendered, repaired: [] }
  const out: Array<Render.Rendered> = []
  const used = new Set<string>()
  for (let i = 0; i < rendered.length; i++) {
    const { sourceMessageId: source, message } = rendered[i]!
    if (message.role === "system") {
      out.push(rendered[i]!)
      continue
    }
    if (message.role === "user") {
      const content = message.content.filter((p) => !isEmptyText(p))
      if (content.length > 0) out.push({ sourceMessageId: source, message: { role: "user", content } })
      continue
    }
    // A tool message not taken by the assistant before it answers nothing: all its results are orphans.
    if (message.role === "tool") continue
    const calls: Array<MM.ToolCallPart> = []
    const provider = new Map<string, MM.ToolCallPart>()
    const content: Array<AssistantContent> = []
    const dropped = new Set<string>()
    for (const part of message.content) {
      if (isEmptyText(part)) continue
      if (part.type === "tool-call") {
        if (used.has(part.toolCallId)) {
          dropped.add(part.toolCallId)
          continue
        }
        used.add(part.toolCallId)
        if (part.providerExecuted === true) provider.set(part.toolCallId, part)
        else calls.push(part)
        content.push(part)
      } else if (part.type === "tool-result") {
        const call = provider.get(part.toolCallId)
        if (call === undefined) continue
        provider.delete(part.toolCallId)
        content.push(part)
      } else content.push(part)
    }
    for (const call of provider.values()) content.push(interrupted(call))
    if (content.length > 0) out.push({ sourceMessageId: source, message: { role: "assistant", content } })
    // The tool messages right after this one answer its calls; the first result per open call is kept.
    const open = new Map(calls.map((c) => [c.toolCallId, c]))
    const results: Array<MM.ToolResultPart> = []
    let resultSource = source
    while (rendered[i + 1]?.message.role === "tool") {
      const next = rendered[++i]!
      resultSource = next.sourceMessageId
      for (const result of (next.message as MM.ToolModelMessage).content) {
        if (dropped.has(result.toolCallId) || !open.has(result.toolCallId)) continue
        open.delete(result.toolCallId)
        results.push(result)
      }
    }
    for (const call of open.values()) results.push(interrupted(call))
    if (results.length > 0) out.push({ sourceMessageId: resultSource, message: { role: "tool", content: results } })
  }
  const first = out.findIndex((r) => r.message.role !== "system")
  if (first !== -1 && out[first]!.message.role !== "user")
    out.splice(first, 0, {
      sourceMessageId: out[first]!.sourceMessageId,
      message: { role: "user", content: [{ type: "text", text: HISTORY_START_TEXT }] },
    })
  return { rendered: out, repaired: found }
}

/** Renders messages in the given order (`Render.render`) and repairs the result: a valid model input. */
export const render = (messages: ReadonlyArray<Message>, options?: Render.Options): ReadonlyArray<Render.Rendered> =>
  repair(Render.render(messages, options)).rendered

/**
 * The window as `pivot window --format json` prints it, `{ "messages": [{ sourceMessageId, message }] }` indented by
 * two spaces: the rendered, repaired model input (`render`); the one home of those bytes, shared by the CLI and the
 * web viewer.
 */
export const toJson = (messages: ReadonlyArray<Message>, options?: Render.Options): string =>
  JSON.stringify({ messages: render(messages, options) }, null, 2)

/**
 * What a replacement of the window's messages (a plugin's `transformWindow` output) breaks that the original did not:
 * an input that renders to nothing, a stored message shown twice or out of the original's order, and any rendered
 * input rule the original kept.
 */
export const replacementViolations = (
  original: ReadonlyArray<Message>,
  replacement: ReadonlyArray<Message>,
  options?: Render.Options,
): Array<Violation> => {
  const out: Array<Violation> = []
  const before = new Map(original.map((m, i) => [m.id, i]))
  const seen = new Set<MessageId>()
  let last = -1
  for (const m of replacement) {
    if (seen.has(m.id)) out.push(violation("order", m.id, "the replacement shows this message twice"))
    seen.add(m.id)
    const at = before.get(m.id)
    if (at === undefined) continue
    if (at < last) out.push(violation("order", m.id, "the replacement moves this message before one it followed"))
    else last = at
  }
  const known = new Set(inputViolations(Render.render(original, options)).map(format))
  for (const v of inputViolations(Render.render(replacement, options))) if (!known.has(format(v))) out.push(v)
  return out
}
