// The viewer on an imported Claude Code session (issue 33), in a real headless Chromium driven by playwright-core: the
// session listed, its compaction marked on the chart as a pivot, the pivot's report naming the summary Claude Code
// wrote, and the ledger's figures with the session's real cache reads and writes (counted here from the transcript).
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { importTranscript } from "@pivot/agents"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { open, ready, type Viewer } from "./support/viewer.ts"

const root = fileURLToPath(new URL("../../../", import.meta.url))
const fixture = path.join(root, "packages/agents/test/fixtures/hand-written/claude-code-compaction.jsonl")
const text = fs.readFileSync(fixture, "utf8")
const { sessionId, events } = importTranscript(text, { final: true })!
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-serve-agents-"))
const db = path.join(dir, "pivot.db")

// The cache figures as the transcript holds them: each API response's last line's usage, one per message.id.
const usage = new Map<
  string,
  { input_tokens: number; cache_read_input_tokens: number; cache_creation_input_tokens: number }
>()
for (const line of text.split("\n").filter((l) => l !== "")) {
  const entry = JSON.parse(line) as { type?: string; isSidechain?: boolean; message?: { id?: string; usage?: never } }
  if (entry.type === "assistant" && entry.isSidechain !== true && entry.message?.id !== undefined)
    usage.set(entry.message.id, entry.message.usage!)
}
const cacheRead = [...usage.values()].reduce((sum, u) => sum + u.cache_read_input_tokens, 0)
const cacheWrite = [...usage.values()].reduce((sum, u) => sum + u.cache_creation_input_tokens, 0)
const uncached = [...usage.values()].reduce((sum, u) => sum + u.input_tokens, 0)

let viewer: Viewer | undefined
let page: Page
let base: string

beforeAll(async () => {
  viewer = await open(db, sessionId, events)
  ;({ page, base } = viewer)
}, 120_000)

afterAll(async () => {
  await viewer?.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

describe("the viewer on an imported Claude Code session", () => {
  it("shows its compaction as a pivot with Claude Code's summary, and the ledger with its real cache figures", async () => {
    await page.goto(`${base}/`)
    await ready(page)
    expect(await page.locator("#sessions tbody tr").first().getAttribute("data-session")).toBe(sessionId)

    await page.goto(`${base}/sessions/${sessionId}`)
    await ready(page)
    await page.waitForSelector(".u-over .mark")
    const pivots = page.locator(".mark[data-kind='pivot']")
    expect(await pivots.count()).toBe(1)
    expect(Number(await pivots.first().getAttribute("data-version"))).toBe(
      events.findIndex((e) => e._tag === "SummaryFinished") + 1,
    )
    expect(cacheRead).toBe(14_210)
    expect(cacheWrite).toBe(45_142)
    const figures = (await page.textContent("#cost-figures")) ?? ""
    const read = Math.round((100 * cacheRead) / (cacheRead + cacheWrite + uncached))
    expect(figures).toMatch(new RegExp(`cache hit ratio ${read}%`))
    expect(await page.locator("#pivots li").count()).toBe(1)

    await page.goto(`${base}/sessions/${sessionId}/pivots/1`)
    await ready(page)
    expect(await page.textContent("body")).toContain("This session is being continued from a previous conversation")
  }, 120_000)
})
