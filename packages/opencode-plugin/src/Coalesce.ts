/**
 * One sync for a burst of requests (issue 29 item 4). OpenCode's bus reports a session's changes one by one (the
 * session, each message, each part); each used to start its own sync — a read of the whole session through OpenCode's
 * server and an import — one after the other on OpenCode's one JavaScript thread. A sync queued and not started yet
 * reads the session when it starts, so it records everything a later request would: the later request joins it, taking
 * the wider of the two moments when one covers the other.
 */
import type { Moment } from "./Recorder.ts"

/** A sync asked for: its moment and, for `idle`, the count of begun turns when the session went idle (`Turns`). */
export interface Request {
  readonly moment: Moment
  readonly turn?: number | undefined
}

/**
 * The one sync that serves both `pending` (queued, not started) and `asked` (a later request), or `undefined` when
 * neither covers the other and both must run.
 *
 * - `step` (finished messages) is covered by every moment: `call` and `idle` record it and more.
 * - `call` covers `call`; it does not join `idle`, nor `idle` it: an `idle` sync turns into `step` when a turn began
 *   since (`Turns.moment`), which leaves out the user messages a `call` must record, and a `call` leaves out what
 *   only `idle` settles.
 * - `idle` covers `idle` of the same turn count only (another count: the session went idle again, the older request
 *   would be read as `step`).
 */
export const join = (pending: Request, asked: Request): Request | undefined => {
  if (asked.moment === "step") return pending
  if (pending.moment === "step") return asked
  if (pending.moment === "call" && asked.moment === "call") return pending
  if (pending.moment === "idle" && asked.moment === "idle" && pending.turn === asked.turn) return pending
  return undefined
}
