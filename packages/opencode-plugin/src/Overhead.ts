/**
 * What an agent request carries besides pivot's window — OpenCode's system prompt and the tools' schemas — when the
 * plugin has not seen this session's system prompt yet. Under drive mode the HUD is rendered in the messages
 * transform, and OpenCode 1.18 builds the system prompt after it (`experimental.chat.system.transform` comes once the
 * messages are converted to the model's input), so on a session's first call in a process the plugin has only what
 * the store recorded (ADR 0052):
 *
 * - the fixed prompt the session's own calls measured (`FixedPrompt`: the first call's reported prompt tokens minus
 *   pivot's estimate of the messages it was sent), which a process continuing the session folds from the log;
 * - for a session no call measured yet (a new one), the fixed prompt the project's newest session of the same agent
 *   and model measured: OpenCode builds the same system prompt and tools for them.
 *
 * Pure: the plugin reads the states and OpenCode's list of sessions.
 */
import { Window } from "@pivot/core"
import type { Sessions } from "@pivot/runtime"

/** Who makes a session's calls: the agent and model of its newest user message (OpenCode's `agent`, `model`). */
export interface Caller {
  readonly agent: string | undefined
  readonly model: string | undefined
}

/** The caller of a session's coming call, from its window's newest user message. */
export const callerOf = (state: Sessions.State): Caller => {
  const user = Window.messages(state.session.window).findLast((m) => m.role === "user")
  return {
    agent: user?.role === "user" ? user.agent : undefined,
    model:
      user?.role === "user" && user.model !== undefined ? `${user.model.providerId}/${user.model.modelId}` : undefined,
  }
}

/** The fixed prompt (system prompt and tool schemas, tokens) a session's recorded calls measured, if any. */
export const measuredOf = (state: Sessions.State): number | undefined => state.runtime.fixed.tokens

/** The fixed prompt another session measured, when its caller is `caller` (another agent or model: another prompt). */
export const measuredFor = (state: Sessions.State, caller: Caller): number | undefined => {
  const theirs = callerOf(state)
  return theirs.agent === caller.agent && theirs.model === caller.model ? measuredOf(state) : undefined
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
