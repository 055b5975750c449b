/**
 * The turns OpenCode began in each session, counted as they begin: `chat.message` (a user message, before OpenCode
 * stores it) and `session.status` going busy (any loop, a compaction asked through the API included). The plugin's
 * end-of-turn sync (`session.idle`) notes the count when the event comes; if a turn began by the time OpenCode's
 * messages were read, the session was no longer idle when read, and only what is finished may be recorded: the next
 * turn's step may still be running (issue 29's recorder race: recording it unfinished stopped the session's record).
 */
import type { Moment } from "./Recorder.ts"

/** A counter of begun turns per session. */
export const make = () => {
  const begun = new Map<string, number>()
  return {
    /** A turn began in `sessionId`. */
    begin: (sessionId: string): void => {
      begun.set(sessionId, (begun.get(sessionId) ?? 0) + 1)
    },
    /** The count now, to compare later (`moment`). */
    count: (sessionId: string): number => begun.get(sessionId) ?? 0,
    /**
     * The moment a sync must take, read now that OpenCode's messages are in hand: `idle` only when no turn began since
     * the count `at` was taken; `step` otherwise.
     */
    moment: (sessionId: string, moment: Moment, at: number | undefined): Moment =>
      moment === "idle" && at !== undefined && (begun.get(sessionId) ?? 0) !== at ? "step" : moment,
  }
}
