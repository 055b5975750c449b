// Probe: the session page's main thread on a warm server, profiled (CDP Profiler) from navigation to `data-drawn` and
// `data-ready`. Writes the profile to OUT (.cpuprofile) and prints the page's marks.
//
//   node --conditions=@pivot/source scripts/bench/servePageProbe.ts --db FILE --out OUT [--session ID]
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { Serve } from "@pivot/server"

type Chromium = typeof import("../../packages/server/test/support/chromium.ts")
const root = fileURLToPath(new URL("../../", import.meta.url))
const { launch } = (await import(path.join(root, "packages/server/test/support/chromium.ts"))) as Chromium
const { values } = parseArgs({
  options: { db: { type: "string" }, out: { type: "string" }, session: { type: "string", default: "ses_bench_serve" } },
})
if (values.db === undefined || values.out === undefined) throw new Error("--db FILE --out OUT are required")
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "viewer3-probe-"))
const server = await Serve.start({ source: values.db, port: 0 })
const url = `http://127.0.0.1:${server.port}/sessions/${values.session}`
const context = await launch(path.join(dir, "profile"))
try {
  // Warm: the catalog, the ledger and the compressed answers.
  for (let i = 0; i < 2; i++) {
    const page = await context.newPage()
    await page.goto(url)
    await page.waitForSelector("body[data-ready='true']", { timeout: 300_000 })
    await page.close()
  }
  for (let i = 0; i < 3; i++) {
    const page = await context.newPage()
    const cdp = await context.newCDPSession(page)
    await cdp.send("Performance.enable")
    await cdp.send("Network.setCacheDisabled", { cacheDisabled: true })
    await cdp.send("Profiler.enable")
    await cdp.send("Profiler.setSamplingInterval", { interval: 200 })
    await cdp.send("Profiler.start")
    await page.goto(url)
    await page.waitForSelector("body[data-ready='true']", { timeout: 300_000 })
    const { profile } = await cdp.send("Profiler.stop")
    const { metrics } = await cdp.send("Performance.getMetrics")
    const m = (n: string) => ((metrics.find((x) => x.name === n)?.value ?? 0) * 1000).toFixed(0)
    const drawn = await page.getAttribute("body", "data-drawn-ms")
    const ready = await page.getAttribute("body", "data-ready-ms")
    const timing = await page.evaluate(() => {
      // Browser types, written out (the scripts are type-checked without the DOM's).
      type Timing = { readonly name: string; readonly startTime: number; readonly responseEnd: number }
      type Nav = Timing & { readonly domContentLoadedEventEnd: number; readonly loadEventEnd: number }
      const n = performance.getEntriesByType("navigation" as never)[0] as unknown as Nav
      const r = performance.getEntriesByType("resource" as never).map((e) => {
        const x = e as unknown as Timing & { readonly encodedBodySize: number }
        return `${x.name.replace(/^https?:\/\/[^/]+/, "")} ${x.startTime.toFixed(0)}→${x.responseEnd.toFixed(0)} (${x.encodedBodySize}B)`
      })
      return {
        html: `${n.responseEnd.toFixed(0)} dcl ${n.domContentLoadedEventEnd.toFixed(0)} load ${n.loadEventEnd.toFixed(0)}`,
        r,
      }
    })
    console.log(
      `run ${i}: drawn ${drawn} ms, ready ${ready} ms, TaskDuration ${m("TaskDuration")} ms, ScriptDuration ${m("ScriptDuration")}, LayoutDuration ${m("LayoutDuration")}, RecalcStyleDuration ${m("RecalcStyleDuration")}`,
    )
    console.log(`  html ${timing.html}`)
    for (const r of timing.r) console.log(`  ${r}`)
    fs.writeFileSync(`${values.out}.${i}.cpuprofile`, JSON.stringify(profile))
    await page.close()
  }
} finally {
  await context.close()
  await server.close()
  fs.rmSync(dir, { recursive: true, force: true })
}
