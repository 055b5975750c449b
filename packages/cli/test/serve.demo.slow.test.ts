/// <reference lib="dom" />
/**
 * The viewer on the demo session (`pivot demo`: 87 events, 3 pivots, a run of 6 pruned outputs, the last pivot after
 * the last model step) in headless Chromium (slow lane). Issue 18: the session page printed a stray `null` under
 * the pivots list, the chart's x axis ended at the last step (v81) so pivot #3 (v85) had no mark, the legend counted
 * "prune: 1" where the header said 6 prunes, and the overflow line started at v27.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Serve } from "@pivot/server"
import type { BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launch } from "../../server/test/support/chromium.ts"
import * as Demo from "../src/demo/Demo.ts"
import * as Example from "../src/demo/Example.ts"
import { plain } from "../src/demo/Style.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-serve-demo-"))
const db = path.join(dir, "demo.db")
let outcome: Demo.Outcome
let server: Serve.Started
let context: BrowserContext
let page: Page

beforeAll(async () => {
  outcome = await Demo.run({ example: Example.load(Example.bundledPath), db, out: () => {}, style: plain, width: 100 })
  server = await Serve.start({ source: db, port: 0 })
  // Debian's Chromium, installed when missing, as the server's browser tests launch it.
  context = await launch(path.join(dir, "profile"))
  page = await context.newPage()
  await page.goto(`http://127.0.0.1:${server.port}/sessions/${outcome.sessionId}`)
  await page.waitForSelector("body[data-ready='true'], #error", { timeout: 20_000 })
  expect(await page.locator("#error").count()).toBe(0)
}, 120_000)

afterAll(async () => {
  await context?.close()
  await server?.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

const tags = () => outcome.events.map((l) => l.event._tag)

describe("the viewer on the demo session, in Chromium", () => {
  it("is the session the issue names: pivots after the last model step, a run of pruned outputs", () => {
    const versionOf = (tag: string) => outcome.events.filter((l) => l.event._tag === tag).map((l) => l.version)
    const pivots = versionOf("SummaryFinished")
    expect(pivots.length).toBeGreaterThanOrEqual(3)
    expect(pivots.at(-1)!).toBeGreaterThan(Math.max(...versionOf("AssistantStepRecorded")))
    expect(tags().filter((t) => t === "PartCompacted").length).toBeGreaterThan(1)
  })

  it("prints no stray null: every text of the page is one the page means", async () => {
    const texts = await page.evaluate(() => {
      const out: Array<string> = []
      const walk = document.createTreeWalker(document.getElementById("main")!, NodeFilter.SHOW_TEXT)
      for (let n = walk.nextNode(); n !== null; n = walk.nextNode()) out.push(n.textContent ?? "")
      return out
    })
    expect(texts.filter((t) => /^\s*(null|undefined)\s*$/.test(t))).toEqual([])
  })

  it("shows every pivot as a mark inside the chart, the last one (after the last model step) too", async () => {
    const marks = page.locator(".mark[data-kind='pivot']")
    const pivots = outcome.events.filter((l) => l.event._tag === "SummaryFinished").map((l) => l.version)
    expect(await marks.count()).toBe(pivots.length)
    const placed = await marks.evaluateAll((nodes) =>
      nodes.map((n) => {
        const box = (n as HTMLElement).getBoundingClientRect()
        const over = (n.closest(".u-over") as HTMLElement).getBoundingClientRect()
        return {
          version: Number((n as HTMLElement).dataset.version),
          hidden: (n as HTMLElement).hidden,
          inside: box.left + box.width / 2 >= over.left && box.left + box.width / 2 <= over.right,
        }
      }),
    )
    expect(placed).toEqual(pivots.map((version) => ({ version, hidden: false, inside: true })))
  })

  it("counts tool outputs pruned in the legend as the header does", async () => {
    const header = (await page.textContent("#figures"))!.match(/(\d+) tool outputs pruned/)
    const legend = (await page.textContent(".legend"))!.match(/pruned outputs: (\d+)/)
    const pruned = tags().filter((t) => t === "PartCompacted").length
    expect(Number(header![1])).toBe(pruned)
    expect(Number(legend![1])).toBe(pruned)
  })

  it("draws the overflow line from the start of the axis, at the first recorded trigger, to its end", async () => {
    const timeline = (await (
      await page.request.get(`http://127.0.0.1:${server.port}/api/sessions/${outcome.sessionId}/timeline`)
    ).json()) as { head: number; chart: { version: Array<number>; overflow: Array<number | null> } }
    const first = outcome.events.find((l) => l.event._tag === "OverflowDetected" && l.event.trigger !== undefined)
    const trigger = first?.event._tag === "OverflowDetected" ? first.event.trigger : undefined
    expect(trigger).toBeGreaterThan(0)
    expect(timeline.chart.version[0]).toBe(0)
    expect(timeline.chart.version.at(-1)).toBe(timeline.head)
    expect(timeline.chart.overflow[0]).toBe(trigger)
    expect(timeline.chart.overflow.every((t) => t !== null)).toBe(true)
  })
})
