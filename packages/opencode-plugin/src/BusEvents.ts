/**
 * The bus events the hooks act on (the `event` hook), by what each means to pivot; every other event (a streamed
 * part's delta, plugin and catalog updates, an unfinished message) is none of pivot's business. One home for the
 * question: the hooks dispatch on it (Plugin.ts), and the worker's port posts only these (Thread.ts, ADR 0073).
 */
import type { BusEvent } from "./OpenCode.ts"

/** What a heard event says: a turn ended or began, OpenCode compacted, a step finished, pruned a part, or (re)named. */
export type Heard = "idle" | "busy" | "compacted" | "finished" | "pruned" | "session"

/** The session an event is about (`properties.sessionID`, else its info's `sessionID`). */
export const sessionOf = (event: BusEvent): string | undefined => {
  const props = event.properties
  if (props === undefined) return undefined
  if (typeof props.sessionID === "string") return props.sessionID
  const info = props.info as { readonly sessionID?: unknown } | undefined
  return typeof info?.sessionID === "string" ? info.sessionID : undefined
}

/** Whether `session.status` says a session's loop is running (`busy` or `retry`). */
const isBusy = (event: BusEvent): boolean => {
  const status = event.properties?.status as { readonly type?: unknown } | undefined
  return status?.type === "busy" || status?.type === "retry"
}

/** Whether `message.updated` is an assistant message OpenCode finished (completed, or ended in an error). */
const finishedMessage = (event: BusEvent): boolean => {
  const info = event.properties?.info as
    | { readonly role?: unknown; readonly time?: { readonly completed?: unknown }; readonly error?: unknown }
    | undefined
  return info?.role === "assistant" && (typeof info.time?.completed === "number" || info.error !== undefined)
}

/** Whether `message.part.updated` is a tool part OpenCode just pruned (`state.time.compacted`). */
const prunedPart = (event: BusEvent): boolean => {
  const part = event.properties?.part as
    | { readonly type?: unknown; readonly state?: { readonly time?: { readonly compacted?: unknown } } }
    | undefined
  return part?.type === "tool" && typeof part.state?.time?.compacted === "number"
}

/** What an event about a session means to the hooks; undefined when they do nothing with it. */
export const heard = (event: BusEvent): Heard | undefined => {
  if (sessionOf(event) === undefined) return undefined
  switch (event.type) {
    case "session.idle":
      return "idle"
    case "session.status":
      return isBusy(event) ? "busy" : undefined
    case "session.compacted":
      return "compacted"
    case "message.updated":
      return finishedMessage(event) ? "finished" : undefined
    case "message.part.updated":
      return prunedPart(event) ? "pruned" : undefined
    case "session.updated":
      return "session"
    default:
      return undefined
  }
}
