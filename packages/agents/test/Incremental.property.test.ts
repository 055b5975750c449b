import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { Events } from "@pivot/core"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { importTranscript } from "../src/Import.ts"

const root = join(import.meta.dirname, "fixtures")
const texts = ["claude-code", "codex", "hand-written", "recorded"].flatMap((dir) =>
  readdirSync(join(root, dir))
    .filter((f) => f.endsWith(".jsonl"))
    .map((f) => ({ file: join(dir, f), text: readFileSync(join(root, dir, f), "utf8") })),
)

const encoded = (events: ReadonlyArray<Events.Event>) => events.map((e) => JSON.stringify(Events.encode(e)))

describe("incremental import (what `--follow` and a re-run rely on)", () => {
  it.each(texts)(
    "property: $file cut anywhere imports to a prefix of the whole file's events, and the cut line waits",
    ({ text }) => {
      const whole = encoded(importTranscript(text, { final: false })!.events)
      const finished = encoded(importTranscript(text, { final: true })!.events)
      // Reading a live file never records what the finished file would record differently.
      expect(finished.slice(0, whole.length)).toEqual(whole)
      fc.assert(
        fc.property(fc.integer({ min: 0, max: text.length }), (cut) => {
          const partial = text.slice(0, cut)
          const imported = importTranscript(partial, { final: false })
          if (imported === undefined) return
          expect(whole.slice(0, imported.events.length)).toEqual(encoded(imported.events))
          // What was read ends at a line's end; the rest of the cut waits.
          const consumed = imported.report.consumed
          expect(consumed + imported.report.waiting).toBe(Buffer.byteLength(partial))
          const bytes = Buffer.from(text)
          // At a line's end: after its newline, or a whole JSON line whose newline is not written yet.
          const atLineEnd =
            consumed === 0 || consumed === bytes.length || bytes[consumed - 1] === 0x0a || bytes[consumed] === 0x0a
          expect(atLineEnd).toBe(true)
        }),
        { numRuns: 300 },
      )
    },
  )
})
