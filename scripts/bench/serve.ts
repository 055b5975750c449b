// Benchmark: `pivot serve` on a 100k-event session. Targets: the session page drawn in ≤ 1 s with ≤ 1 MB transferred
// (issue 32), and the window at any version served in ≤ 200 ms.
//
// The session is played through core's Decider (user turns with a tool call, usage climbing, a prune every 5 turns,
// a compaction every 25) and written into a SQLite file with the inline read models, as pivot writes. Then a real
// server is started on it, and:
//   - timeline API: GET /api/sessions/:id/timeline, the first after start (the server reads and folds the whole
//     log once) and warm (caught up: one stream-version query);
//   - ledger: the whole ledger (/ledger) first and again compressed (brotli, gzip), and what the session page asks of
//     it (/ledger/chart), bytes as sent;
//   - a fresh server's first page: a new server is started on the file and the session page opened in Chromium right
//     away (three times, a new server each time): its first render (`data-drawn`: figures, timeline, marks and the
//     pivot list), the page complete (`data-ready`: the ledger's chart and lines filled in too), the renderer's
//     main-thread time, and the CPU time of this process (the server; the browser is another process) from the
//     server's start to the page complete;
//   - pages: headless Chromium (Debian's, as the browser tests) opens the session page and the newest pivot's report
//     five times each in a fresh tab with the HTTP cache off, and waits until the page is complete (its `data-ready`:
//     charts and marks placed); first render and complete are measured in the page from navigation start, the
//     main-thread time is CDP's TaskDuration, the bytes are every response's encoded length as Chromium received it
//     (headers included);
//   - window: GET /api/sessions/:id/window/:v (entries, sources, pruned originals) and …/raw (the CLI's bytes) at 40
//     versions spread over the session plus the head, on a warm server.
//
//   node scripts/bench/serve.ts [--events 100000] [--no-browser] [--db FILE] [--fresh 3] [--fresh-only] [--cli]
//
// `--db FILE` keeps the session's SQLite file there: written when FILE does not exist, used as it is when it does,
// whatever it holds of the session (it takes many minutes to write on a loaded machine; the file is not removed).

import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks"
import { DatabaseSync } from "node:sqlite"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { Serve } from "@pivot/server"

// The session generator and the headless Chromium the viewer's tests use (loaded by path: they belong to the server
// package's tests).
type Play = typeof import("../../packages/server/test/support/play.ts")
type Chromium = typeof import("../../packages/server/test/support/chromium.ts")

const { values } = parseArgs({
  options: {
    events: { type: "string", default: "100000" },
    "no-browser": { type: "boolean", default: false },
    db: { type: "string" },
    fresh: { type: "string", default: "3" },
    "fresh-only": { type: "boolean", default: false },
    cli: { type: "boolean", default: false },
  },
})
// How many fresh servers (each a new server and its first page); `--fresh-only`: those alone, nothing after them;
// `--cli`: each fresh server a `pivot serve FILE --port 0` of its own (the CLI's bin, a new Node process, as a user
// starts it), timed from the spawn, instead of a server started in this process (whose code is compiled after the first).
const FRESH = Number(values.fresh)
const TARGET_EVENTS = Number(values.events)
const SESSION = "ses_bench_serve"
const root = fileURLToPath(new URL("../../", import.meta.url))
const { play, writeSqlite } = (await import(path.join(root, "packages/server/test/support/play.ts"))) as Play
const { launch } = (await import(path.join(root, "packages/server/test/support/chromium.ts"))) as Chromium

const stats = (samples: Array<number>) => {
  const sorted = [...samples].sort((a, b) => a - b)
  return {
    median: sorted[Math.floor(sorted.length / 2)]!,
    p95: sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.95))]!,
    max: sorted[sorted.length - 1]!,
  }
}
const ms = (n: number) => (n < 10 ? n.toFixed(1) : n.toFixed(0))

const timed = async (url: string) => {
  const start = performance.now()
  const response = await fetch(url)
  const body = await response.arrayBuffer()
  if (!response.ok) throw new Error(`${url}: ${response.status}`)
  return { ms: performance.now() - start, bytes: body.byteLength }
}

// About 4.1 events per turn: a user message, two steps, a prune every 5 turns and a compaction every 25.
const played = () =>
  play({
    sessionId: SESSION,
    turns: Math.ceil(TARGET_EVENTS / 4.1),
    compactEvery: 25,
    pruneEvery: 5,
    outputChars: 500,
  })
/** A `pivot serve` of its own: its port once it prints its address, its CPU so far (Linux's /proc), and a stop. */
interface Spawned {
  readonly port: number
  readonly cpuMs: () => number
  readonly close: () => Promise<void>
}
const spawned = async (file: string): Promise<Spawned> => {
  const child = spawn(process.execPath, [path.join(root, "packages/cli/src/bin.mjs"), "serve", file, "--port", "0"], {
    stdio: ["ignore", "pipe", "inherit"],
  })
  const port = await new Promise<number>((resolve, reject) => {
    let text = ""
    child.stdout.on("data", (chunk) => {
      text += chunk
      const found = /http:\/\/127\.0\.0\.1:(\d+)\//.exec(text)
      if (found !== null) resolve(Number(found[1]))
    })
    child.on("exit", (code) => reject(new Error(`pivot serve exited ${code}: ${text}`)))
  })
  return {
    port,
    // utime and stime, in clock ticks of 10 ms (fields 14 and 15 of /proc/PID/stat, after the command's parenthesis).
    cpuMs: () => {
      const fields = fs.readFileSync(`/proc/${child.pid}/stat`, "utf8").split(") ")[1]!.split(" ")
      return (Number(fields[11]) + Number(fields[12])) * 10
    },
    close: () =>
      new Promise<void>((resolve) => {
        child.on("exit", () => resolve())
        child.kill("SIGTERM")
      }),
  }
}
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-bench-serve-"))
const db = values.db === undefined ? path.join(dir, "serve.db") : path.resolve(values.db)
const rows: Array<[string, string]> = []
// Each figure is printed as soon as it is measured too: a long run at load that is stopped keeps what it measured.
const row = (what: string, result: string) => {
  rows.push([what, result])
  console.error(`${what}: ${result}`)
}
try {
  // The session's events: those the file holds when it exists (played and written before, perhaps only in part, as
  // a stopped write leaves its batches), else played and written now.
  let total: number
  if (fs.existsSync(db)) {
    const file = new DatabaseSync(db, { readOnly: true })
    total = Number(file.prepare("SELECT MAX(stream_version) AS v FROM pivot_events").get()?.v ?? 0)
    file.close()
    if (total === 0) throw new Error(`${db} holds no session`)
    console.error(`using ${db} as it is: ${total} events`)
  } else {
    const events = played()
    const writeStart = performance.now()
    await writeSqlite(db, SESSION, events)
    total = events.length
    console.error(`wrote ${total} events in ${ms(performance.now() - writeStart)} ms`)
  }
  if (!values["no-browser"]) {
    // A fresh server's first page: the server starts, and the session page is asked for at once.
    const context = await launch(path.join(dir, "profile"))
    try {
      const drawn: Array<number> = []
      const ready: Array<number> = []
      const mainThread: Array<number> = []
      const serverCpu: Array<number> = []
      // From the server's start (this process's clock and the page's share the epoch): what a user who starts the
      // server and opens the page waits. Chromium stamps navigation start only once it navigates; a server that
      // blocks its event loop may delay that stamp, and then "from navigation" leaves the wait out.
      const drawnFromStart: Array<number> = []
      const navigationAfterGoto: Array<number> = []
      for (let i = 0; i < FRESH; i++) {
        const page = await context.newPage()
        const cdp = await context.newCDPSession(page)
        await cdp.send("Performance.enable")
        await cdp.send("Network.setCacheDisabled", { cacheDisabled: true })
        const cpuBefore = process.cpuUsage()
        const startEpoch = Date.now()
        const fresh = values.cli ? await spawned(db) : await Serve.start({ source: db, port: 0 })
        try {
          const gotoEpoch = Date.now()
          await page.goto(`http://127.0.0.1:${fresh.port}/sessions/${SESSION}`, { timeout: 300_000 })
          await page.waitForSelector("body[data-ready='true'], #error", { timeout: 300_000 })
          const cpu = "cpuMs" in fresh ? undefined : process.cpuUsage(cpuBefore)
          if ((await page.locator("#error").count()) > 0)
            throw new Error(`fresh server: ${await page.locator("#error").textContent()}`)
          ready.push(Number(await page.getAttribute("body", "data-ready-ms")))
          // A page that fills nothing in later (or a viewer from before data-drawn) is drawn when it is ready.
          drawn.push(Number((await page.getAttribute("body", "data-drawn-ms")) ?? ready[ready.length - 1]))
          const origin = await page.evaluate(() => performance.timeOrigin)
          drawnFromStart.push(origin + drawn[drawn.length - 1]! - startEpoch)
          navigationAfterGoto.push(origin - gotoEpoch)
          const { metrics } = await cdp.send("Performance.getMetrics")
          mainThread.push((metrics.find((m) => m.name === "TaskDuration")?.value ?? 0) * 1000)
          serverCpu.push(cpu === undefined ? (fresh as Spawned).cpuMs() : (cpu.user + cpu.system) / 1000)
        } finally {
          await page.close()
          await fresh.close()
        }
      }
      row("fresh servers' first renders from navigation, each (ms)", drawn.map(ms).join(", "))
      const [d, r, c, s] = [stats(drawn), stats(ready), stats(mainThread), stats(serverCpu)]
      const [f, n] = [stats(drawnFromStart), stats(navigationAfterGoto)]
      row(
        `fresh server, session page: first render (data-drawn), wall from navigation (median / max of ${FRESH})`,
        `${ms(d.median)} / ${ms(d.max)} ms`,
      )
      row(
        `fresh server, session page: first render, wall from the server's start (median / max of ${FRESH})`,
        `${ms(f.median)} / ${ms(f.max)} ms`,
      )
      row(
        `fresh server: Chromium's navigation start after the bench asked it to navigate (median / max of ${FRESH})`,
        `${ms(n.median)} / ${ms(n.max)} ms`,
      )
      row(
        `fresh server, session page: complete, the ledger filled in (data-ready), wall (median / max of ${FRESH})`,
        `${ms(r.median)} / ${ms(r.max)} ms`,
      )
      row(
        `fresh server, session page: renderer main-thread busy time to complete (median / max of ${FRESH})`,
        `${ms(c.median)} / ${ms(c.max)} ms`,
      )
      row(
        `fresh server: CPU of the server's process from its start to the page complete (median / max of ${FRESH})`,
        `${ms(s.median)} / ${ms(s.max)} ms`,
      )
    } finally {
      await context.close()
    }
  }
  if (!values["fresh-only"]) {
    const server = await Serve.start({ source: db, port: 0 })
    const base = `http://127.0.0.1:${server.port}`
    try {
      // CPU time as well as wall time: on a shared, loaded machine the wall time mostly measures the wait for a core.
      // What the first request shares the process with: the collector's pauses and the event loop's longest block.
      const pauses: Array<number> = []
      const gc = new PerformanceObserver((list) => {
        for (const e of list.getEntries()) pauses.push(e.duration)
      })
      gc.observe({ entryTypes: ["gc"] })
      const loop = monitorEventLoopDelay({ resolution: 10 })
      loop.enable()
      const cpuBefore = process.cpuUsage()
      const cold = await timed(`${base}/api/sessions/${SESSION}/timeline`)
      const coldCpu = process.cpuUsage(cpuBefore)
      loop.disable()
      for (const e of gc.takeRecords()) pauses.push(e.duration)
      gc.disconnect()
      const warmTimeline: Array<number> = []
      for (let i = 0; i < 7; i++) warmTimeline.push((await timed(`${base}/api/sessions/${SESSION}/timeline`)).ms)
      const versions = Array.from({ length: 40 }, (_, i) => Math.max(1, Math.round(((i + 1) / 40) * total)))
      versions.push(total)
      const windowMs: Array<number> = []
      const rawMs: Array<number> = []
      for (const v of versions) {
        windowMs.push((await timed(`${base}/api/sessions/${SESSION}/window/${v}`)).ms)
        rawMs.push((await timed(`${base}/api/sessions/${SESSION}/window/${v}/raw`)).ms)
      }
      const ledgerBytes = async (url: string, accept?: string) => {
        const start = performance.now()
        const response = await new Promise<number>((resolve, reject) => {
          const req = http.request(
            url,
            { headers: accept === undefined ? {} : { "accept-encoding": accept } },
            (res) => {
              let n = 0
              res.on("data", (c: Buffer) => (n += c.length))
              res.on("end", () => resolve(n))
            },
          )
          req.on("error", reject)
          req.end()
        })
        return { ms: performance.now() - start, bytes: response }
      }
      const ledgerCold = await ledgerBytes(`${base}/api/sessions/${SESSION}/ledger`)
      const ledgerBr = await ledgerBytes(`${base}/api/sessions/${SESSION}/ledger`, "br")
      const ledgerGzip = await ledgerBytes(`${base}/api/sessions/${SESSION}/ledger`, "gzip")
      const chartCold = await ledgerBytes(`${base}/api/sessions/${SESSION}/ledger/chart`, "br")
      const events500 = await timed(`${base}/api/sessions/${SESSION}/events?offset=50000&limit=500`)
      const w = stats(windowMs)
      const r = stats(rawMs)
      const t = stats(warmTimeline)
      row("events in the session", total.toLocaleString("en-US"))
      row(
        "timeline API, first request right after start (waits for the log to be read and folded): wall / CPU",
        `${ms(cold.ms)} / ${ms((coldCpu.user + coldCpu.system) / 1000)} ms`,
      )
      row(
        "the same request: the garbage collector's pauses meanwhile (count, total), the event loop's longest block",
        `${pauses.length}, ${ms(pauses.reduce((a, b) => a + b, 0))} ms; ${ms(loop.max / 1e6)} ms`,
      )
      row("timeline API, warm (median / p95)", `${ms(t.median)} / ${ms(t.p95)} ms`)
      row("timeline payload", `${(cold.bytes / 1024).toFixed(0)} KiB`)
      row(
        "window at a version, entries JSON (median / p95 / max of 41)",
        `${ms(w.median)} / ${ms(w.p95)} / ${ms(w.max)} ms`,
      )
      row(
        "window at a version, the CLI's bytes (median / p95 / max of 41)",
        `${ms(r.median)} / ${ms(r.p95)} / ${ms(r.max)} ms`,
      )
      row(
        "the whole ledger (/ledger), first request: wall time, bytes as sent",
        `${ms(ledgerCold.ms)} ms, ${(ledgerCold.bytes / 1024).toFixed(0)} KiB`,
      )
      row(
        "the same again, brotli / gzip: bytes as sent (wall time)",
        `${(ledgerBr.bytes / 1024).toFixed(0)} KiB (${ms(ledgerBr.ms)} ms) / ${(ledgerGzip.bytes / 1024).toFixed(0)} KiB (${ms(ledgerGzip.ms)} ms)`,
      )
      row(
        "what the session page asks of the ledger (/ledger/chart), brotli: wall time, bytes as sent",
        `${ms(chartCold.ms)} ms, ${(chartCold.bytes / 1024).toFixed(0)} KiB`,
      )
      row("a page of 500 events", `${ms(events500.ms)} ms, ${(events500.bytes / 1024).toFixed(0)} KiB`)

      if (!values["no-browser"]) {
        const context = await launch(path.join(dir, "profile"))
        try {
          // Each page five times, a fresh tab each time (its counters start at zero; the HTTP cache is off, so every
          // load transfers everything it needs, assets included).
          const load = async (url: string) => {
            const drawn: Array<number> = []
            const interactive: Array<number> = []
            const mainThread: Array<number> = []
            // Of the main thread's time: script, layout and style recalculation (CDP's ScriptDuration, LayoutDuration,
            // RecalcStyleDuration), and how many layouts (LayoutCount).
            const parts: Array<{ script: number; layout: number; style: number; layouts: number }> = []
            const transferred: Array<number> = []
            for (let i = 0; i < 5; i++) {
              const page = await context.newPage()
              const cdp = await context.newCDPSession(page)
              await cdp.send("Performance.enable")
              await cdp.send("Network.enable")
              await cdp.send("Network.setCacheDisabled", { cacheDisabled: true })
              let bytes = 0
              cdp.on("Network.loadingFinished", (e) => {
                bytes += e.encodedDataLength
              })
              await page.goto(`${base}${url}`, { timeout: 300_000 })
              await page.waitForSelector("body[data-ready='true'], #error", { timeout: 120_000 })
              const error = await page
                .locator("#error")
                .textContent({ timeout: 100 })
                .catch(() => null)
              if (error !== null) throw new Error(`${url} failed: ${error}`)
              interactive.push(Number(await page.getAttribute("body", "data-ready-ms")))
              drawn.push(
                Number((await page.getAttribute("body", "data-drawn-ms")) ?? interactive[interactive.length - 1]),
              )
              const { metrics } = await cdp.send("Performance.getMetrics")
              const metric = (name: string) => metrics.find((m) => m.name === name)?.value ?? 0
              mainThread.push(metric("TaskDuration") * 1000)
              parts.push({
                script: metric("ScriptDuration") * 1000,
                layout: metric("LayoutDuration") * 1000,
                style: metric("RecalcStyleDuration") * 1000,
                layouts: metric("LayoutCount"),
              })
              transferred.push(bytes)
              await page.close()
            }
            return {
              drawn: stats(drawn),
              interactive: stats(interactive),
              mainThread: stats(mainThread),
              script: stats(parts.map((p) => p.script)),
              layout: stats(parts.map((p) => p.layout)),
              style: stats(parts.map((p) => p.style)),
              layouts: stats(parts.map((p) => p.layouts)),
              transferred: stats(transferred),
            }
          }
          const pivots = ((await (await fetch(`${base}/api/sessions/${SESSION}`)).json()) as { pivots: Array<unknown> })
            .pivots.length
          for (const [name, url] of [
            ["session page", `/sessions/${SESSION}`],
            [`pivot report (#${pivots}, the newest)`, `/sessions/${SESSION}/pivots/${pivots}`],
          ] as const) {
            const { drawn: d, interactive: p, mainThread: c, transferred: t, ...of } = await load(url)
            row(
              `${name} in Chromium, first render: wall time from navigation to the page drawn (data-drawn; median / max of 5)`,
              `${ms(d.median)} / ${ms(d.max)} ms`,
            )
            row(
              `the same, complete: to everything in place (data-ready, what "first render" measured before; median / max of 5)`,
              `${ms(p.median)} / ${ms(p.max)} ms`,
            )
            row(
              `the same, the renderer's main-thread busy time (CDP TaskDuration; median / max of 5)`,
              `${ms(c.median)} / ${ms(c.max)} ms`,
            )
            row(
              "of which script / layout / style recalculation (median of 5), and layouts (median)",
              `${ms(of.script.median)} / ${ms(of.layout.median)} / ${ms(of.style.median)} ms, ${of.layouts.median}`,
            )
            row(
              `the same, bytes transferred (every response of the load as sent, headers included; median)`,
              `${(t.median / 1024).toFixed(0)} KiB`,
            )
          }
        } finally {
          await context.close()
        }
      }
    } finally {
      await server.close()
    }
  }
} finally {
  // The temporary folder (and the session's file, unless --db named where to keep it).
  fs.rmSync(dir, { recursive: true, force: true })
}

console.log(
  `load average during the run: ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(" ")} (2 cores)\n`,
)
console.log("| what | result |")
console.log("|---|---:|")
for (const [what, result] of rows) console.log(`| ${what} | ${result} |`)
