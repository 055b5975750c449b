// The viewer in a real headless Chromium (Debian's, installed by the test setup when missing), driven by
// playwright-core: the sessions page, a session's chart and its pivot marks against the event log, a click on a
// pivot showing exactly what `pivot window --at` prints, keyboard stepping, a diff, an inert XSS payload, and a live
// update arriving while a writer appends. Screenshots go to docs/img/ for the README.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { ArtifactCheck, type Events, Ledger, type Projection } from "@pivot/core"
import { Projections, ReadModels, SessionLog } from "@pivot/store"
import { Effect, ManagedRuntime } from "effect"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Serve } from "../src/index.ts"
import { play, writeSqlite } from "./support/play.ts"
import { open, ready, type Viewer } from "./support/viewer.ts"

const root = fileURLToPath(new URL("../../../", import.meta.url))
const shots = path.join(root, "docs/img")
const SESSION = "ses_browser"
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-serve-browser-"))
const db = path.join(dir, "pivot.db")
// Pivots from the second on carry their recorded check and a judge's probes; the first is as an older log has it.
const events = play({ sessionId: SESSION, turns: 40, probes: true })

let viewer: Viewer | undefined
let page: Page
let base: string

beforeAll(async () => {
  viewer = await open(db, SESSION, events)
  ;({ page, base } = viewer)
  fs.mkdirSync(shots, { recursive: true })
}, 60_000)

afterAll(async () => {
  await viewer?.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

describe("the viewer in Chromium", () => {
  it("lists the sessions, sortable", async () => {
    await page.goto(`${base}/`)
    await ready(page)
    const rows = page.locator("#sessions tbody tr")
    expect(await rows.count()).toBe(1)
    expect(await rows.first().getAttribute("data-session")).toBe(SESSION)
    await page.click("th[data-sort='events']")
    expect(await rows.count()).toBe(1)
    await page.screenshot({ path: path.join(shots, "serve-sessions.png") })
  })

  it("opens a session: one pivot mark on the chart per pivot in the event log, each named on hover", async () => {
    const asked: Array<string> = []
    const onRequest = (request: { url: () => string }) => asked.push(new URL(request.url()).pathname)
    page.on("request", onRequest)
    await page.click(`a[href='/sessions/${SESSION}']`)
    await ready(page)
    page.off("request", onRequest)
    // The page asks for what it draws: the cost chart and the listed pivots' lines, never the whole ledger.
    expect(asked).toContain(`/api/sessions/${SESSION}/ledger/chart`)
    expect(asked).toContain(`/api/sessions/${SESSION}/ledger/entries`)
    expect(asked).not.toContain(`/api/sessions/${SESSION}/ledger`)
    await page.waitForSelector(".u-over .mark")
    const pivotMarks = page.locator(".mark[data-kind='pivot']")
    const inLog = events.filter((e) => e._tag === "SummaryFinished").length
    expect(inLog).toBeGreaterThan(1)
    expect(await pivotMarks.count()).toBe(inLog)
    // The event log's own page, filtered to the events that form pivots, agrees.
    const response = await page.request.get(`${base}/api/sessions/${SESSION}/events?type=SummaryFinished&limit=500`)
    const logged = (await response.json()) as { total: number; events: Array<{ version: number }> }
    expect(logged.total).toBe(await pivotMarks.count())
    const markVersions = await pivotMarks.evaluateAll((nodes) =>
      nodes.map((n) => Number((n as HTMLElement).dataset.version)),
    )
    expect(markVersions).toEqual(logged.events.map((e) => e.version))
    for (const kind of ["fallback", "provider-overflow", "manual-compaction"])
      expect(await page.locator(`.mark[data-kind='${kind}']`).count(), kind).toBe(1)
    await pivotMarks.first().hover()
    expect(await page.textContent("#tooltip")).toMatch(/SummaryFinished · pivot: summary msg_/)
    // The ledger beside it: a cost chart, the session's figures, and each pivot's line.
    await page.waitForSelector("#cost .u-over")
    expect(await page.textContent("#cost-figures")).toMatch(/billed input [\d,]+ eq · cache hit ratio \d+%/)
    const lines = page.locator("#pivots li .ledger")
    expect(await lines.count()).toBe(inLog)
    expect(await lines.first().textContent()).toMatch(/shed ~[\d,]+ · summary call [\d,]+ eq · cache ~/)
    // The first pivot has no ArtifactsChecked: its check is computed from its plan and summary.
    const first = Ledger.entries(Ledger.fold(events)).find((e) => e.kind === "compaction")!.retention!.artifacts
    expect(await lines.first().textContent()).toMatch(
      `kept ${first.filter(ArtifactCheck.inView).length}/${first.length} artifacts in view, ${first.filter(ArtifactCheck.reachable).length} in view or recallable (checked now)`,
    )
    // The others show the check and the probes the log recorded for them, counted here from the events.
    const checks = events.filter((e) => e._tag === "ArtifactsChecked")
    const probes = events.filter((e) => e._tag === "ProbesAnswered")
    expect(checks.length).toBe(inLog - 1)
    const second = checks[0]!._tag === "ArtifactsChecked" ? checks[0]!.artifacts : []
    const answered = probes[0]!._tag === "ProbesAnswered" ? probes[0]!.probes.flatMap((p) => p.expected) : []
    // In view or recallable: computed on read from the pivot's head (the ledger's fold), not recorded.
    const countOf = (check: Events.Event, rule: (a: ArtifactCheck.Checked) => boolean) =>
      Ledger.entries(Ledger.fold(events))
        .find((e) => check._tag === "ArtifactsChecked" && e.markerId === check.markerId)!
        .retention!.artifacts.filter(rule).length
    expect(await lines.nth(1).textContent()).toMatch(
      new RegExp(
        ` · kept ${countOf(checks[0]!, ArtifactCheck.inView)}/${second.length} artifacts in view, ${countOf(checks[0]!, ArtifactCheck.reachable)} in view or recallable · probes: the judge named ` +
          `${answered.filter((x) => x.found).length}/${answered.length} from the summary$`,
      ),
    )
    // The cost chart draws each pivot's line where it formed (the versions of the events that formed them) and each
    // prune batch's tick; a pivot's line names its ledger on hover.
    const costPivots = page.locator("#cost .cost-mark[data-kind='pivot']")
    expect(await costPivots.count()).toBe(inLog)
    const formed = events.flatMap((e, i) => (e._tag === "SummaryFinished" ? [i + 1] : []))
    expect(
      await costPivots.evaluateAll((nodes) => nodes.map((n) => Number((n as HTMLElement).dataset.version))),
    ).toEqual(formed)
    const pruneRuns = events.filter((e, i) => e._tag === "PartCompacted" && events[i - 1]?._tag !== "PartCompacted")
    expect(await page.locator("#cost .cost-mark[data-kind='prune']").count()).toBe(pruneRuns.length)
    // Its ledger line is asked for when hovered.
    await costPivots.nth(1).hover()
    await page.waitForFunction(() =>
      /^pivot #2 · v\d+ · shed ~/.test(document.getElementById("cost-tooltip")?.textContent ?? ""),
    )
    expect(await page.textContent("#cost-tooltip")).toMatch(/^pivot #2 · v\d+ · shed ~[\d,]+ · [^\n]* · probes: /)
    expect(await page.textContent("#cost-figures")).toMatch(
      new RegExp(`calls \\(${inLog} summary, ${probes.length} probe\\)`),
    )
    // Nothing left out of the page shows as the word "null" (the optional "newest 100" note once did).
    const nullTexts = await page.evaluate(
      () =>
        [...(document.getElementById("main")?.childNodes ?? [])].filter(
          (n) => n.nodeType === Node.TEXT_NODE && n.textContent === "null",
        ).length,
    )
    expect(nullTexts).toBe(0)
    await page.screenshot({ path: path.join(shots, "serve-timeline.png"), fullPage: true })
  })

  it("compares the strategies on the session page: a column per strategy, every recorded call replayed", async () => {
    // The played model is not in the catalog: without a context window, the comparison says so in one line.
    await page.click("#whatif-run")
    await page.waitForSelector("#whatif-error")
    expect(await page.textContent("#whatif-error")).toMatch(/^no context window known for test\/test-model/)
    await page.fill("#whatif-context", "20000")
    await page.fill("#whatif-output", "4000")
    await page.click("#whatif-run")
    await page.waitForSelector("#whatif", { timeout: 60_000 })
    const heads = await page.locator("#whatif thead th").allTextContents()
    expect(heads).toEqual(["", "opencode-1.17", "opencode-1.18", "pivot", "cache-aware"])
    const steps = events.filter((e) => e._tag === "AssistantStepRecorded" && e.message.summary !== true).length
    const calls = await page.locator("#whatif tbody tr").first().locator("td").allTextContents()
    expect(calls).toEqual(Array(4).fill(steps.toLocaleString("en-US")))
    expect(await page.locator("#whatif-error").count()).toBe(0)
  })

  it("clicks a pivot and shows the window at that version: the same bytes as pivot window --at", async () => {
    const mark = page.locator(".mark[data-kind='pivot']").nth(1)
    const version = Number(await mark.getAttribute("data-version"))
    await mark.click()
    await page.waitForURL(`**/sessions/${SESSION}/versions/${version}`)
    await ready(page)
    await page.waitForFunction(() => (document.getElementById("raw")?.textContent ?? "").length > 0)
    const shown = await page.textContent("#raw")
    const cli = execFileSync(
      process.execPath,
      [
        path.join(root, "packages/cli/src/bin.ts"),
        "window",
        "--db",
        db,
        "--session",
        SESSION,
        "--at",
        String(version),
        "--format",
        "json",
      ],
      { encoding: "utf8" },
    )
    expect(`${shown}\n`).toBe(cli)
    expect(await page.locator(".entry[data-kind='summary']").count()).toBe(1)
    expect(await page.locator(".entry[data-kind='marker']").count()).toBeGreaterThan(0)
    await page.screenshot({ path: path.join(shots, "serve-window.png") })
  })

  it("steps through versions with the keyboard", async () => {
    const start = Number(await page.getAttribute("body", "data-version"))
    await page.keyboard.press("ArrowLeft")
    await page.waitForFunction((v) => document.body.dataset.version === String(v - 1), start)
    expect(page.url()).toContain(`/versions/${start - 1}`)
    await page.keyboard.press("ArrowRight")
    await page.waitForFunction((v) => document.body.dataset.version === String(v), start)
    await page.keyboard.press("Shift+ArrowRight")
    await page.waitForFunction((v) => Number(document.body.dataset.version) > v, start)
    expect(await page.textContent("#version")).toContain(`version ${await page.getAttribute("body", "data-version")}`)
  })

  it("runs a diff between two versions", async () => {
    const first = events.findIndex((e) => e._tag === "SummaryFinished") + 1
    const requested = events.findIndex((e) => e._tag === "CompactionRequested") + 1
    await page.goto(`${base}/sessions/${SESSION}/diff?from=1&to=2`)
    await ready(page)
    await page.fill("#from", String(requested - 1))
    await page.fill("#to", String(first))
    await page.click("#run-diff")
    await page.waitForURL(`**/diff?from=${requested - 1}&to=${first}`)
    await ready(page)
    expect(await page.locator("#diff .row[data-change='entered']").count()).toBeGreaterThan(0)
    expect(await page.locator("#diff .row[data-change='left']").count()).toBeGreaterThan(0)
    expect(await page.textContent("#diff-counts")).toMatch(/\d+ entered · \d+ left/)
    await page.screenshot({ path: path.join(shots, "serve-diff.png") })
  })

  it("shows the pivot report and the event log, filtered and paginated", async () => {
    const asked: Array<string> = []
    const onRequest = (request: { url: () => string }) => asked.push(new URL(request.url()).pathname)
    page.on("request", onRequest)
    await page.goto(`${base}/sessions/${SESSION}/pivots/2`)
    await ready(page)
    page.off("request", onRequest)
    // Its own ledger line, not the session's whole ledger.
    expect(asked).toContain(`/api/sessions/${SESSION}/ledger/entries`)
    expect(asked).not.toContain(`/api/sessions/${SESSION}/ledger`)
    expect(await page.textContent("#report")).toContain("extractive fallback (failed)")
    expect(await page.textContent("#report")).toMatch(/ledger\s*shed ~[\d,]+ · summary call/)
    // Its recorded check and probes, item by item as the log has them.
    const check = events.find((e) => e._tag === "ArtifactsChecked")
    const probed = events.find((e) => e._tag === "ProbesAnswered")
    if (check?._tag !== "ArtifactsChecked" || probed?._tag !== "ProbesAnswered") throw new Error("no check played")
    expect(await page.locator("#retention li").count()).toBe(check.artifacts.length)
    expect(await page.locator("#retention li[data-named='true']").count()).toBe(
      check.artifacts.filter((a) => a.named).length,
    )
    // In view or recallable, as the ledger computes it on read from the pivot's head.
    const entry = Ledger.entries(Ledger.fold(events)).find((e) => e.markerId === check.markerId)!
    const reachable = entry.retention!.artifacts.filter(ArtifactCheck.reachable).length
    expect(await page.locator("#retention li[data-reachable='true']").count()).toBe(reachable)
    expect(await page.textContent("#retention-counts")).toContain(`${reachable} in view or recallable`)
    expect(await page.locator("#probes dt").allTextContents()).toEqual(probed.probes.map((p) => p.question))
    // What it replaced: one row per message the summariser was given (its plan's head), as context_recall lists it.
    const summaries = events.filter((e) => e._tag === "SummaryFinished")
    const marker = summaries[1]?._tag === "SummaryFinished" ? summaries[1].markerId : undefined
    const started = events.find((e) => e._tag === "CompactionStarted" && e.markerId === marker)
    if (started?._tag !== "CompactionStarted") throw new Error("no second pivot played")
    expect(await page.locator("#dropped tbody tr td:first-child").allTextContents()).toEqual([...started.plan.head])
    await page.screenshot({ path: path.join(shots, "serve-pivot.png") })
    await page.goto(`${base}/sessions/${SESSION}/events`)
    await ready(page)
    expect(await page.locator("#events tbody tr").count()).toBe(50)
    await page.selectOption("#type", "PartCompacted")
    await page.waitForURL("**/events?type=PartCompacted")
    await ready(page)
    const prunes = events.filter((e) => e._tag === "PartCompacted").length
    expect(await page.locator("#events tbody tr[data-type='PartCompacted']").count()).toBe(prunes)
    expect(await page.locator("#events tbody tr").count()).toBe(prunes)
  })

  it("leaves the XSS payload in a tool output inert: shown as text, never run", async () => {
    const version = events.findIndex((e) => JSON.stringify(e).includes("__pwned")) + 1
    await page.goto(`${base}/sessions/${SESSION}/versions/${version}`)
    await ready(page)
    expect(await page.locator("#window").textContent()).toContain("<script>window.__pwned = 1</script>")
    expect(await page.locator("#window img").count()).toBe(0)
    expect(await page.locator("#window script").count()).toBe(0)
    expect(await page.evaluate(() => (window as { __pwned?: unknown }).__pwned)).toBeUndefined()
  })

  it("updates the open session page live while a writer appends", async () => {
    await page.goto(`${base}/sessions/${SESSION}`)
    await ready(page)
    await page.waitForSelector(`#live[data-head='${events.length}']`)
    const before = await page.locator(".mark[data-kind='manual-compaction']").count()
    const user: Events.Event = {
      _tag: "UserMessageAdded",
      at: 1_800_000_000_000,
      message: {
        role: "user",
        id: "msg_live_browser_01" as never,
        createdAt: 1_800_000_000_000,
        parts: [{ type: "text", id: "prt_live_browser_01" as never, text: "compact now, please" }],
      },
    }
    const marker: Events.Event = {
      _tag: "CompactionRequested",
      at: 1_800_000_000_001,
      marker: {
        role: "user",
        id: "msg_live_browser_02" as never,
        createdAt: 1_800_000_000_001,
        parts: [{ type: "compaction", id: "prt_live_browser_02" as never, auto: false }],
      },
    }
    await Effect.runPromise(
      SessionLog.append(SESSION, events.length, [
        { id: "evt_live_browser_1", event: user },
        { id: "evt_live_browser_2", event: marker },
      ]).pipe(Effect.provide(ReadModels.layerSqlite({ filename: db }))),
    )
    await page.waitForSelector(`#live[data-head='${events.length + 2}']`, { timeout: 20_000 })
    await page.waitForFunction(
      (n) => document.querySelectorAll(".mark[data-kind='manual-compaction']").length === n,
      before + 1,
    )
    expect(await page.textContent("#figures")).toContain(`${events.length + 2} events`)
  })

  it("declares no favicon: no page asks for one or meets a 404", async () => {
    const failed: Array<string> = []
    const onResponse = (response: { status: () => number; url: () => string }) => {
      if (response.status() >= 400 || new URL(response.url()).pathname === "/favicon.ico")
        failed.push(`${response.status()} ${response.url()}`)
    }
    page.on("response", onResponse)
    for (const url of ["/", `/sessions/${SESSION}`, `/sessions/${SESSION}/events`, `/sessions/${SESSION}/versions/5`]) {
      await page.goto(`${base}${url}`)
      await ready(page)
    }
    page.off("response", onResponse)
    expect(failed).toEqual([])
  })

  it("fits the event log in the window: no wider than the 1,280-pixel viewport", async () => {
    for (const type of ["", "?type=AssistantStepRecorded", "?type=CompactionStarted"]) {
      await page.goto(`${base}/sessions/${SESSION}/events${type}`)
      await ready(page)
      const width = await page.evaluate(() => document.documentElement.scrollWidth)
      expect(width, type).toBeLessThanOrEqual(1_280)
    }
    // A row's data still opens in full.
    await page.locator("#events details summary").first().click()
    expect(await page.locator("#events details[open] pre").first().textContent()).toMatch(/^\{\n {2}"_tag": /)
  })

  it("says what each prune count counts: outputs pruned in the header, prunes in the ledger", async () => {
    await page.goto(`${base}/sessions/${SESSION}`)
    await ready(page)
    const outputs = events.filter((e) => e._tag === "PartCompacted").length
    const runs = events.filter((e, i) => e._tag === "PartCompacted" && events[i - 1]?._tag !== "PartCompacted").length
    expect(outputs).toBeGreaterThan(runs)
    expect(await page.textContent("#figures")).toContain(` · ${outputs} tool outputs pruned · `)
    expect(await page.textContent("#cost-figures")).toContain(
      `, ${runs} prunes (each clearing one or more tool outputs): net saving`,
    )
    expect(await page.textContent(".legend")).toContain(`pruned outputs: ${outputs}`)
  })

  it("folds a long diff: runs of like rows and long messages behind one line each, unfolded on a click", async () => {
    await page.goto(`${base}/sessions/${SESSION}/diff?from=20&to=${events.length}`)
    await ready(page)
    const height = await page.evaluate(() => document.documentElement.scrollHeight)
    expect(height).toBeLessThanOrEqual(3 * 860)
    const counts = await page.textContent("#diff-counts")
    const left = Number(/(\d+) left/.exec(counts ?? "")?.[1])
    expect(left).toBeGreaterThan(3)
    const run = page.locator("#diff details.run[data-change='left']").first()
    expect(Number(await run.getAttribute("data-rows"))).toBe(left)
    expect(await run.locator(".row").first().isVisible()).toBe(false)
    await run.locator("summary").first().click()
    expect(await run.locator(".row").first().isVisible()).toBe(true)
    expect(await page.locator("#diff .row").count()).toBeGreaterThan(left)
  })

  it("offers a per-session projection's keys as a choice, never a prompt", async () => {
    const pjDb = path.join(dir, "projections.db")
    const byType: Projection.Projection<Record<string, number>> = {
      name: "events-by-type",
      version: 1,
      initial: {},
      evolve: (state, event) => ({ ...state, [event._tag]: (state[event._tag] ?? 0) + 1 }),
    }
    const played = play({ sessionId: "ses_pj_browser", turns: 6 })
    const runtime = ManagedRuntime.make(
      Projections.layerSqlite({
        filename: pjDb,
        projections: [Projections.async(byType, { scope: "session" })],
        projector: { pollInterval: "5 millis" },
      }),
    )
    await runtime.runPromise(
      Effect.gen(function* () {
        const entries = played.map((event, i) => ({ id: SessionLog.eventId("ses_pj_browser", i + 1), event }))
        yield* SessionLog.append("ses_pj_browser", 0, entries)
        yield* (yield* Projections.Projections).awaitCaughtUp
      }),
    )
    await runtime.dispose()
    const served = await Serve.start({ source: pjDb, port: 0 })
    const dialogs: Array<string> = []
    const onDialog = (dialog: { message: () => string; dismiss: () => Promise<void> }) => {
      dialogs.push(dialog.message())
      void dialog.dismiss()
    }
    page.on("dialog", onDialog)
    try {
      await page.goto(`http://127.0.0.1:${served.port}/`)
      await ready(page)
      const select = page.locator("select.projection-key[data-projection='events-by-type']")
      expect(await select.locator("option").allTextContents()).toEqual(["a session…", "ses_pj_browser"])
      await select.selectOption("ses_pj_browser")
      await page.waitForFunction(() => (document.getElementById("projection-state")?.textContent ?? "") !== "")
      const counts: Record<string, number> = {}
      for (const event of played) counts[event._tag] = (counts[event._tag] ?? 0) + 1
      expect(JSON.parse((await page.textContent("#projection-state")) ?? "")).toEqual(counts)
      // Back to no choice: nothing is shown, and never the word "null".
      await select.selectOption("")
      expect(await page.textContent("#projection-state")).toBe("")
      expect(dialogs).toEqual([])
    } finally {
      page.off("dialog", onDialog)
      await served.close()
    }
  })

  it("draws 600 pivots as columns with gaps, each naming how many it holds, and zooms into one", async () => {
    const many = "ses_many_pivots"
    const manyDb = path.join(dir, "many.db")
    const played = play({ sessionId: many, turns: 600, compactEvery: 1, pruneEvery: 1, outputChars: 40 })
    const pivots = played.filter((e) => e._tag === "SummaryFinished").length
    expect(pivots).toBe(600)
    await writeSqlite(manyDb, many, played)
    const served = await Serve.start({ source: manyDb, port: 0 })
    try {
      await page.goto(`http://127.0.0.1:${served.port}/sessions/${many}`)
      await ready(page)
      const width = await page.evaluate(() => document.querySelector("#chart .u-over")!.clientWidth)
      const counts = (selector: string) =>
        page.locator(selector).evaluateAll((nodes) => nodes.map((n) => Number((n as HTMLElement).dataset.count)))
      for (const selector of [".mark[data-kind='pivot']", "#cost .cost-mark[data-kind='pivot']"]) {
        const columns = await counts(selector)
        // One element per 6-pixel column at most, and together they hold every pivot of the log.
        expect(columns.length, selector).toBeLessThanOrEqual(Math.ceil(width / 6) + 1)
        expect(columns.length, selector).toBeGreaterThan(10)
        expect(
          columns.reduce((a, b) => a + b, 0),
          selector,
        ).toBe(pivots)
        const lefts = await page
          .locator(selector)
          .evaluateAll((nodes) => nodes.map((n) => (n as HTMLElement).getBoundingClientRect().left))
        lefts.sort((a, b) => a - b)
        // Columns side by side keep a gap: the solid block of the 976-pivot session is gone.
        for (let i = 1; i < lefts.length; i++) expect(lefts[i]! - lefts[i - 1]!, selector).toBeGreaterThanOrEqual(3)
      }
      // A column of several pivots names how many on hover and zooms in on them when clicked.
      const crowded = page.locator(".mark[data-kind='pivot'].mark-many").first()
      const held = Number(await crowded.getAttribute("data-count"))
      expect(held).toBeGreaterThan(1)
      await crowded.dispatchEvent("mouseenter")
      expect(await page.textContent("#tooltip")).toMatch(
        new RegExp(`^${held} pivot marks, v\\d+ to v\\d+: click to zoom in$`),
      )
      const before = await page.locator(".mark[data-kind='pivot']").count()
      await crowded.dispatchEvent("click")
      await page.waitForFunction((n) => {
        const marks = [...document.querySelectorAll<HTMLElement>(".mark[data-kind='pivot']")]
        return marks.length > 0 && marks.length < n && marks.every((m) => m.dataset.count === "1")
      }, before)
      expect(await page.locator(".mark[data-kind='pivot']").count()).toBe(held)
    } finally {
      await served.close()
    }
  }, 180_000)
})
