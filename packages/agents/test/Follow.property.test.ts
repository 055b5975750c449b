import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { Events } from "@pivot/core"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Follower } from "../src/Follow.ts"
import { importTranscript } from "../src/Import.ts"

const root = join(import.meta.dirname, "fixtures")
const texts = ["claude-code", "codex", "hand-written", "recorded"].flatMap((dir) =>
  readdirSync(join(root, dir))
    .filter((f) => f.endsWith(".jsonl"))
    .map((f) => ({ file: join(dir, f), bytes: readFileSync(join(root, dir, f)) })),
)

const encoded = (events: ReadonlyArray<Events.Event>) => events.map((e) => JSON.stringify(Events.encode(e)))

/** The file's bytes in pieces cut at the given offsets (sorted, repeats allowed: an empty read). */
const pieces = (bytes: Uint8Array, cuts: ReadonlyArray<number>): Array<Uint8Array> => {
  const sorted = [...cuts].sort((a, b) => a - b)
  return [...sorted, bytes.length].map((end, i) => bytes.subarray(i === 0 ? 0 : sorted[i - 1]!, end))
}

describe("Follow: a transcript read as it grows, only the appended bytes each time", () => {
  it.each(texts)(
    "property: $file pushed in any pieces (cut anywhere, inside a character too) answers a prefix of the whole import, then all of it",
    ({ bytes }) => {
      const text = new TextDecoder().decode(bytes)
      // The reference: the whole text imported at once, as a live file (final: false).
      const whole = encoded(importTranscript(text, { final: false })!.events)
      fc.assert(
        fc.property(fc.array(fc.integer({ min: 0, max: bytes.length }), { maxLength: 12 }), (cuts) => {
          const follower = new Follower()
          let seen = 0
          for (const piece of pieces(bytes, cuts)) {
            const events = encoded(follower.push(piece))
            expect(events.length).toBeGreaterThanOrEqual(seen)
            expect(whole.slice(0, events.length)).toEqual(events)
            seen = events.length
          }
          const last = follower.result()!
          expect(encoded(last.events)).toEqual(whole)
          expect(last.report.consumed).toBe(bytes.lastIndexOf(0x0a) + 1)
          expect(last.report.waiting).toBe(bytes.length - bytes.lastIndexOf(0x0a) - 1)
        }),
        { numRuns: 100 },
      )
    },
  )

  it("a file pushed one byte at a time answers the whole import, every line read once", () => {
    const { bytes } = texts.find((t) => t.file.endsWith("claude-code-compaction.jsonl"))!
    const follower = new Follower()
    for (let i = 0; i < bytes.length; i++) follower.push(bytes.subarray(i, i + 1))
    const text = new TextDecoder().decode(bytes)
    expect(encoded(follower.result()!.events)).toEqual(encoded(importTranscript(text, { final: false })!.events))
    expect(follower.result()!.report.lines).toBe(text.split("\n").length - (text.endsWith("\n") ? 1 : 0))
  })

  it("a character cut between two reads is decoded whole", () => {
    const line = `{"type":"summary","summary":"café — ✓","leafUuid":"u1","sessionId":"s1"}\n`
    const bytes = new TextEncoder().encode(line)
    const cut = bytes.indexOf(0xc3) + 1 // inside "é"
    const follower = new Follower()
    expect(follower.push(bytes.subarray(0, cut))).toEqual([])
    expect(follower.result()).toBeUndefined()
    expect(follower.push(bytes.subarray(cut))).toEqual([])
    expect(follower.agent).toBe("claude-code")
    expect(follower.result()?.report).toMatchObject({ lines: 1, consumed: bytes.length, waiting: 0, malformed: 0 })
  })

  it("20 JSON lines that are neither agent's: not a transcript, for good; 19: still waiting", () => {
    const other = (n: number) => `${Array.from({ length: n }, (_, i) => `{"n":${i}}`).join("\n")}\n`
    const nineteen = new Follower()
    expect(nineteen.push(new TextEncoder().encode(other(19)))).toEqual([])
    expect(nineteen.rejected).toBe(false)
    const twenty = new Follower()
    expect(twenty.push(new TextEncoder().encode(other(20)))).toEqual([])
    expect(twenty.rejected).toBe(true)
    // What detect itself answers for the same text.
    expect(importTranscript(other(20), { final: false })).toBeUndefined()
  })
})
