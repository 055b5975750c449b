import { readFileSync } from "node:fs"
import { join } from "node:path"
import { importTranscript } from "@pivot/agents"
import { Recall } from "@pivot/core"
import { describe, expect, it } from "vitest"
import * as Tools from "../src/Tools.ts"

const fixture = join(import.meta.dirname, "../../agents/test/fixtures/hand-written/claude-code-compaction.jsonl")
const text = readFileSync(fixture, "utf8")
const { events, sessionId } = importTranscript(text, { final: true })!
// The tool output Claude Code's compaction dropped, as the transcript holds it.
const readOutput = (JSON.parse(text.split("\n")[5]!) as { message: { content: Array<{ content: string }> } }).message
  .content[0]!.content

describe("context_recall over an imported Claude Code session", () => {
  it("lists what the pivot dropped, with the recall id of every text and tool output", () => {
    const listed = Tools.recall(events, { pivot: 1 })
    expect(listed.found).toHaveLength(3)
    expect(listed.text).toMatch(/^Pivot #1 \(summary msg_[\w-]+\) summarised 3 messages, /)
    expect(listed.text).toContain("(output of Read, ")
    expect(Tools.recall(events, {}).text).toBe(listed.text)
    expect(Tools.recall(events, { pivot: 2 }).text).toBe("No pivot #2: the session has 1 pivot (1 to 1).")
  })

  it("gives back the dropped tool output byte for byte, by the id the listing names", () => {
    const id = /(prt_\w+) \(output of Read,/.exec(Tools.recall(events, { pivot: 1 }).text)![1]!
    const recalled = Tools.recall(events, { id })
    expect(recalled.text).toBe(readOutput)
    expect(recalled.truncated).toBe(false)
  })

  it("pages through an original at the size bound: the pages joined are the original", () => {
    const id = /(prt_\w+) \(output of Read,/.exec(Tools.recall(events, { pivot: 1 }).text)![1]!
    const pages: Array<string> = []
    let offset = 0
    for (let i = 0; i < 100; i++) {
      const page = Tools.recall(events, { id, offset }, 40)
      const bounded = Recall.bound(readOutput, 40, offset)
      pages.push(bounded.text)
      if (!page.truncated) break
      offset = bounded.end
    }
    expect(pages.join("")).toBe(readOutput)
    expect(pages.length).toBeGreaterThan(1)
  })

  it("searches what was dropped and the summary, best first", () => {
    const found = Tools.recall(events, { query: "parse" })
    expect(found.found.length).toBeGreaterThan(0)
    expect(found.text).toMatch(/^\d+ match(es)? for "parse"/)
    expect(Tools.recall(events, { query: "zebra" }).text).toBe(Recall.noMatch("zebra"))
    expect(Tools.recall(events, { query: "?!" }).text).toMatch(/^Invalid context_recall input/)
  })
})

describe("context_usage", () => {
  it("sums the calls as billed: cache reads and writes apart from uncached input", () => {
    const u = Tools.usageFigures(events)
    expect(u).toEqual({
      calls: 3,
      input: 14,
      output: 336,
      reasoning: 0,
      cacheRead: 14210,
      cacheWrite: 14210 + 812 + 30120,
      lastContext: 4 + 52 + 30120,
      pivots: 1,
    })
    expect(Tools.usage(sessionId, events)).toContain("Cache hit ratio 24% of prompt tokens.")
  })
})
