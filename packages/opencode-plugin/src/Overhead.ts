/**
 * What an agent request carries besides pivot's window — OpenCode's system prompt and the tools' schemas — for drive
 * mode's estimates. Under drive mode the HUD is rendered in the messages transform, and OpenCode 1.18 builds the system
 * prompt after it (`experimental.chat.system.transform` comes once the messages are converted to the model's input),
 * so the plugin counts what the store measured (ADR 0052):
 *
 * - the fixed prompt the session's own calls measured (`FixedPrompt`: the first call's reported prompt tokens minus
 *   pivot's estimate of the messages it was sent), the provider's count, which a process continuing the session
 *   folds from the log;
 * - for a session no call measured yet (a new one), the fixed prompt the project's newest session measured at its
 *   first call, when that call was made by the same agent and model: OpenCode builds the same system prompt and tools
 *   for them. Only that session's first events are read (`FIRST_EVENTS`), whatever its length.
 *
 * Pure: the plugin reads the store and OpenCode's list of sessions.
 */
import { type Events, FixedPrompt, type Message, Window } from "@pivot/core"
import type { Sessions } from "@pivot/runtime"

/** Who makes a session's calls: the agent and model of a user message (OpenCode's `agent`, `model`). */
export interface Caller {
  readonly agent: string | undefined
  readonly model: string | undefined
}

const callerOfMessage = (user: Message.UserMessage | undefined): Caller => ({
  agent: user?.agent,
  model: user?.model === undefined ? undefined : `${user.model.providerId}/${user.model.modelId}`,
})

/** The caller of a session's coming call: its window's newest user message's agent and model. */
export const callerOf = (state: Sessions.State): Caller =>
  callerOfMessage(Window.messages(state.session.window).findLast((m): m is Message.UserMessage => m.role === "user"))

/** The fixed prompt (system prompt and tool schemas, tokens) a session's recorded calls measured, if any. */
export const measuredOf = (state: Sessions.State): number | undefined => state.runtime.fixed.tokens

/** How many of another session's first events are read: its first call, which measured its fixed prompt, is there. */
export const FIRST_EVENTS = 64

/**
 * The fixed prompt another session measured at its first call (`FixedPrompt` over its first events), when the user
 * message that call answered was `caller`'s (another agent or model: another prompt, other tools).
 */
export const measuredIn = (first: ReadonlyArray<Sessions.Event>, caller: Caller): number | undefined => {
  const core = first.filter(
    (e): e is Events.Event => e._tag === "UserMessageAdded" || e._tag === "AssistantStepRecorded",
  )
  const user = core.find((e) => e._tag === "UserMessageAdded")
  const theirs = callerOfMessage(user?._tag === "UserMessageAdded" ? user.message : undefined)
  if (user === undefined || theirs.agent !== caller.agent || theirs.model !== caller.model) return undefined
  return core.reduce(FixedPrompt.evolve, FixedPrompt.initial).tokens
}

/** A session as OpenCode's `session.list` gives it (the fields read here). */
export interface Listed {
  readonly id: string
  readonly parentID?: string | null | undefined
  readonly time?: { readonly updated?: number | undefined; readonly created?: number | undefined } | undefined
}

/** How many of the project's other sessions are read for a measurement, newest first. */
export const MAX_CANDIDATES = 3

/**
 * What the plugin asks OpenCode's session list for: the project's root sessions (no subagent's), the most recently
 * updated first, as many as could be candidates — the session itself may be among them — rather than OpenCode's
 * default of 100, which OpenCode would serialize on its one JavaScript thread before a new session's first request.
 */
export const LIST_QUERY = { roots: true, limit: MAX_CANDIDATES + 1 } as const

/**
 * The project's sessions worth reading for a new session's overhead: not the session itself, not a subagent's (a
 * task runs another agent, with its own prompt and tools), newest update first, at most `MAX_CANDIDATES`.
 */
export const candidates = (listed: ReadonlyArray<Listed>, sessionId: string): ReadonlyArray<string> =>
  listed
    .filter((s) => s.id !== sessionId && typeof s.parentID !== "string")
    .toSorted((a, b) => updatedOf(b) - updatedOf(a))
    .slice(0, MAX_CANDIDATES)
    .map((s) => s.id)

const updatedOf = (s: Listed): number => s.time?.updated ?? s.time?.created ?? 0
