// Probe: what a fresh server does between its start and a session page's requests being answered, without a browser.
// Starts `pivot serve` on FILE in this process and asks at once what the session page asks (the ledger's chart, the
// session, the timeline; brotli accepted as Chromium does), then prints when each answer was complete, the process's
// CPU, the garbage collector's pauses and the event loop's longest block over the same span.
//
//   node --conditions=@pivot/source scripts/bench/serveProbe.ts --db FILE [--session ID] [--after-ms N]
//
// `--after-ms N` waits N ms after the start before asking (the bench's last server: asked right away; a page: after
// its HTML and scripts).
import * as http from "node:http"
import { monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks"
import { parseArgs } from "node:util"
import { Serve } from "@pivot/server"

const { values } = parseArgs({
  options: {
    db: { type: "string" },
    session: { type: "string", default: "ses_bench_serve" },
    "after-ms": { type: "string", default: "0" },
  },
})
if (values.db === undefined) throw new Error("--db FILE is required")
const gcs: Array<{ start: number; ms: number }> = []
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) gcs.push({ start: e.startTime, ms: e.duration })
}).observe({ entryTypes: ["gc"] })
const loop = monitorEventLoopDelay({ resolution: 10 })
loop.enable()
const get = (url: string) =>
  new Promise<{ status: number; bytes: number; at: number }>((resolve, reject) => {
    const req = http.request(url, { headers: { "accept-encoding": "gzip, deflate, br" } }, (res) => {
      let n = 0
      res.on("data", (c: Buffer) => (n += c.length))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, bytes: n, at: performance.now() }))
    })
    req.on("error", reject)
    req.end()
  })
const cpu0 = process.cpuUsage()
const t0 = performance.now()
const server = await Serve.start({ source: values.db, port: 0 })
const started = performance.now() - t0
await new Promise((r) => setTimeout(r, Number(values["after-ms"])))
const base = `http://127.0.0.1:${server.port}/api/sessions/${values.session}`
const asked = performance.now() - t0
const report = (name: string) => (r: { status: number; bytes: number; at: number }) =>
  console.log(
    `${name}: ${r.status}, ${(r.bytes / 1024).toFixed(0)} KiB, answered at ${(r.at - t0).toFixed(0)} ms after the start`,
  )
await Promise.all([
  get(`${base}/ledger/chart`).then(report("ledger/chart")),
  get(base).then(report("session")),
  get(`${base}/timeline`).then(report("timeline")),
])
const cpu = process.cpuUsage(cpu0)
const end = performance.now() - t0
loop.disable()
console.log(
  `started (listening) at ${started.toFixed(0)} ms; asked at ${asked.toFixed(0)} ms; all answered at ${end.toFixed(0)} ms`,
)
console.log(`process CPU over the span: ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms`)
const inSpan = gcs.filter((g) => g.start >= t0)
console.log(
  `GC: ${inSpan.length} pauses, ${inSpan.reduce((a, g) => a + g.ms, 0).toFixed(0)} ms in all, longest ${Math.max(0, ...inSpan.map((g) => g.ms)).toFixed(0)} ms`,
)
console.log(
  `event loop: longest block ${(loop.max / 1e6).toFixed(0)} ms, p99 ${(loop.percentile(99) / 1e6).toFixed(0)} ms`,
)
await server.close()
