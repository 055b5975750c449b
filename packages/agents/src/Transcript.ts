/**
 * What importing an agent's transcript answers, whichever the agent: the session's events and a report of what was
 * read, left out, kept unknown or is still waiting. Shared by the Claude Code and Codex CLI readers.
 *
 * A transcript is JSONL that its agent appends to while it runs, so the import reads complete lines only: a last line
 * without its newline is a line still being written, and waits (`report.waiting`). Every id is derived from the line
 * it comes from (its number and the agent's own ids), so importing the same file again, or the file after more lines
 * were appended, answers the same events for the lines already read: the stored events are always a prefix.
 */
import type { Events, Ids, ValidWindow } from "@pivot/core"

/** The agents whose transcripts pivot reads. */
export type Agent = "claude-code" | "codex"

/** What the import did besides the events. */
export interface Report {
  readonly agent: Agent
  /** Complete lines read (blank lines included). */
  readonly lines: number
  /** Bytes of the complete lines read: where a follower resumes. */
  readonly consumed: number
  /** Bytes of a last line still being written (no newline yet); 0 when the file ends with one. */
  readonly waiting: number
  /** Messages imported (user and assistant messages, compaction markers and summaries). */
  readonly messages: number
  /** Parts imported. */
  readonly parts: number
  /** Messages in the imported session's window (what the model sees next). */
  readonly window: number
  /** Compactions imported (each one a pivot). */
  readonly compactions: number
  /** Lines and blocks of kinds pivot knows and leaves out on purpose, by kind (`file-history-snapshot`, …). */
  readonly dropped: Readonly<Record<string, number>>
  /** Lines and blocks of kinds pivot does not know, by kind: kept in this count, never fatal. */
  readonly unknown: Readonly<Record<string, number>>
  /** Lines that are not JSON objects (a corrupt line in the middle): skipped, counted, never fatal. */
  readonly malformed: number
  /** What did not carry over exactly, one sentence each. */
  readonly warnings: ReadonlyArray<string>
  /** What the imported window breaks of the model-input invariant; `Window.render` repairs it before sending. */
  readonly repaired: ReadonlyArray<ValidWindow.Violation>
}

/** An imported transcript. */
export interface ImportResult {
  readonly sessionId: Ids.SessionId
  /** The session's events in stream order, starting with `SessionStarted`; empty when no session line came yet. */
  readonly events: ReadonlyArray<Events.Event>
  readonly report: Report
}

/** How to read the end of the text. */
export interface Options {
  /**
   * Whether the transcript is complete (a plain import) or may still grow (`--follow`). When it may grow, a model
   * call whose end the transcript has not shown yet (more of its blocks, or its usage, may follow) waits for the next
   * line; when it is complete, it is recorded as it stands.
   */
  readonly final: boolean
}

/** Where a read stands in the file: complete lines read, their bytes, and the bytes of a line still being written. */
export interface Progress {
  readonly lines: number
  readonly consumed: number
  readonly waiting: number
}

/** An agent's transcript reader fed line by line (`ClaudeCode.read`, `Codex.read`): what `--follow` keeps. */
export interface Reader {
  /** Reads more complete lines, numbered from 1 in the file, in file order, each line once. */
  readonly feed: (lines: ReadonlyArray<{ readonly number: number; readonly text: string }>) => void
  /** The transcript is complete: a model call still waiting for more of its lines is recorded as it stands. */
  readonly finish: () => void
  /** The events so far (a growing prefix: later feeds only append) and the report, at `progress`. */
  readonly result: (progress: Progress) => ImportResult
  /** The events so far, without the report (which checks the whole window: `result` costs what the window holds). */
  readonly events: () => ReadonlyArray<Events.Event>
}

/** One complete line of a transcript, parsed, with its number (from 1) in the file. */
export interface Line {
  readonly number: number
  readonly value: unknown
}

const utf8 = new TextEncoder()

/** The complete lines of a JSONL text and the bytes of a last line still being written (`parseLine` below). */
export const splitLines = (
  text: string,
): {
  readonly lines: ReadonlyArray<{ readonly number: number; readonly text: string }>
  readonly consumed: number
  readonly waiting: number
} => {
  const lines: Array<{ number: number; text: string }> = []
  let start = 0
  let number = 0
  let consumed = 0
  for (;;) {
    const end = text.indexOf("\n", start)
    if (end === -1) break
    number++
    lines.push({ number, text: text.slice(start, end).replace(/\r$/, "") })
    start = end + 1
  }
  // A last line without its newline is complete when it is a whole JSON object (no proper prefix of a JSON line is
  // one); otherwise it is still being written and waits.
  if (start < text.length && parseLine(text.slice(start)) !== undefined) {
    lines.push({ number: number + 1, text: text.slice(start) })
    start = text.length
  }
  consumed = utf8.encode(text.slice(0, start)).length
  return { lines, consumed, waiting: utf8.encode(text.slice(start)).length }
}

/** A line's JSON, or undefined when it is not a JSON object. */
export const parseLine = (text: string): Readonly<Record<string, unknown>> | undefined => {
  if (text.trim() === "") return undefined
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined
  } catch {
    return undefined
  }
}

/**
 * Which agent wrote a transcript, from its first JSON lines: Codex rollouts are `{ timestamp, type, payload }` with
 * `session_meta` / `response_item` / `event_msg` / `turn_context` types; Claude Code lines carry `sessionId` and
 * `uuid`, or are its `summary` / `file-history-snapshot` lines. Undefined when neither fits.
 */
export const detect = (text: string): Agent | undefined => {
  let seen = 0
  for (const raw of text.split("\n")) {
    const line = parseLine(raw)
    if (line === undefined) continue
    if (++seen > 20) break
    const type = line.type
    if (
      "payload" in line &&
      (type === "session_meta" ||
        type === "response_item" ||
        type === "event_msg" ||
        type === "turn_context" ||
        type === "compacted")
    )
      return "codex"
    if (
      typeof line.sessionId === "string" ||
      type === "summary" ||
      type === "file-history-snapshot" ||
      (typeof line.uuid === "string" && (type === "user" || type === "assistant" || type === "system"))
    )
      return "claude-code"
  }
  return undefined
}
