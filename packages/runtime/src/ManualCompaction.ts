/**
 * A compaction asked for by the application (`compact`) or by the model (`context_compact`): the `CreateCompaction`
 * command, and for the model the record of its request — its focus note cut to `MAX_FOCUS_CHARS` on a grapheme
 * boundary and redacted like a summary (the kinds found recorded), and the tool call that asked.
 */
import { type Ids, Redaction, Session, Text } from "@pivot/core"
import { type CompactRequest, MAX_FOCUS_CHARS } from "./ContextManagerTypes.ts"
import type * as RuntimeEvents from "./RuntimeEvents.ts"
import type { Command, State } from "./Sessions.ts"

/** The command and, for a model's request, the events recorded with it. */
export const commandsOf = (
  state: State,
  request: CompactRequest | undefined,
  made: {
    readonly at: number
    readonly markerId: Ids.MessageId
    readonly partId: Ids.PartId
    readonly redactSecrets: boolean
  },
): { readonly create: Command; readonly records: ReadonlyArray<RuntimeEvents.Event> } => {
  const { markerId, partId, redactSecrets } = made
  const byModel = request?.requestedBy === "model"
  const last = state.runtime.lastUserId
  const parent = last === undefined ? undefined : Session.message(state.session, last)
  // Cut on a grapheme boundary: half an emoji would put a lone surrogate into the summariser's prompt.
  const note = request?.focus === undefined ? undefined : Text.clip(request.focus.trim(), MAX_FOCUS_CHARS)
  // The model's note is stored and printed (inspect): redacted like a summary, kinds recorded.
  const found = note === undefined || !redactSecrets ? undefined : Redaction.redact(note)
  const redacted = found !== undefined && found.redactions.length > 0 ? found : undefined
  const focus = redacted?.text ?? note
  const create: Command = {
    _tag: "CreateCompaction",
    at: made.at,
    markerId,
    partId,
    auto: false,
    reason: byModel ? "model" : "user",
    ...(parent?.role === "user" && parent.agent !== undefined ? { agent: parent.agent } : {}),
    ...(parent?.role === "user" && parent.model !== undefined ? { model: parent.model } : {}),
  }
  const asked: RuntimeEvents.Event = {
    _tag: "CompactionRequestedByModel",
    at: made.at,
    markerId,
    ...(focus === undefined || focus === "" ? {} : { focus }),
    ...(request?.callId === undefined ? {} : { callId: request.callId }),
  }
  const secrets = (found: Redaction.Redacted): RuntimeEvents.Event => ({
    _tag: "SecretsRedacted",
    at: made.at,
    markerId,
    stage: "prompt",
    findings: found.redactions.map((r) => ({ messageId: markerId, field: "focus", kind: r.kind })),
  })
  return { create, records: redacted === undefined ? [asked] : [asked, secrets(redacted)] }
}
