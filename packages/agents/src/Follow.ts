/**
 * A transcript read as it grows (`pivot import --follow`): each read hands over only the bytes appended since the
 * previous one. Complete lines (ended by a newline) go to the agent's reader (`ClaudeCode.read`, `Codex.read`), which
 * keeps its state between reads; a line still being written waits here, as bytes, until its newline comes (a
 * multi-byte character cut between two reads is decoded whole). So a read costs what was appended, not the file.
 *
 * Fed a file's bytes in any pieces, the events are a prefix of what `importTranscript(text, { final: false })`
 * answers for the same text, and all of them once the file ends with a newline (a last line without one waits here
 * even when it is a whole JSON object, which `importTranscript` would read: its newline may be what comes next).
 */

import type { Events } from "@pivot/core"
import * as ClaudeCode from "./ClaudeCode.ts"
import * as Codex from "./Codex.ts"
import { type Agent, detect, type ImportResult, parseLine, type Reader } from "./Transcript.ts"

/** Complete lines held back until the agent is known: `detect` reads at most this many JSON lines. */
const DETECT_LINES = 20

const NEWLINE = 0x0a
const decoder = new TextDecoder()

/** Follows one transcript from its first byte. */
export class Follower {
  private reader: Reader | undefined
  /** The agent, once its lines told it; undefined before, and for good when they are neither agent's. */
  agent: Agent | undefined
  /** Complete lines read before the agent was known. */
  private held: Array<{ readonly number: number; readonly text: string }> = []
  private notTranscript = false
  private partial: Uint8Array = new Uint8Array(0)
  private lines = 0
  private consumed = 0

  /**
   * Reads appended bytes. Answers the events so far (they only ever grow; empty while no line told the agent yet, and
   * for good when the first lines are neither agent's). It costs what was appended: `result` makes the report.
   */
  push(bytes: Uint8Array): ReadonlyArray<Events.Event> {
    const data = this.partial.length === 0 ? bytes : concat(this.partial, bytes)
    const end = data.lastIndexOf(NEWLINE)
    if (end === -1) this.partial = data
    else {
      const complete = decoder.decode(data.subarray(0, end))
      this.partial = data.slice(end + 1)
      this.consumed += end + 1
      const lines = complete.split("\n").map((text) => ({ number: ++this.lines, text: text.replace(/\r$/, "") }))
      this.read(lines)
    }
    return this.reader?.events() ?? []
  }

  /** The import so far with its report (checking the whole window), or undefined while the agent is not known. */
  result(): ImportResult | undefined {
    if (this.reader === undefined) return undefined
    return this.reader.result({ lines: this.lines, consumed: this.consumed, waiting: this.partial.length })
  }

  /** Whether the first lines showed the file is neither agent's transcript. */
  get rejected(): boolean {
    return this.notTranscript
  }

  private read(lines: ReadonlyArray<{ readonly number: number; readonly text: string }>): void {
    if (this.reader !== undefined) {
      this.reader.feed(lines)
      return
    }
    if (this.notTranscript) return
    this.held.push(...lines)
    const text = this.held.map((l) => l.text).join("\n")
    this.agent = detect(text)
    if (this.agent === undefined) {
      const json = this.held.filter((l) => parseLine(l.text) !== undefined).length
      if (json >= DETECT_LINES) {
        this.notTranscript = true
        this.held = []
      }
      return
    }
    this.reader = this.agent === "claude-code" ? ClaudeCode.read() : Codex.read()
    this.reader.feed(this.held)
    this.held = []
  }
}

const concat = (a: Uint8Array, b: Uint8Array): Uint8Array => {
  const out = new Uint8Array(a.length + b.length)
  out.set(a, 0)
  out.set(b, a.length)
  return out
}
