// `pivot import --follow` benchmark: a Claude Code transcript of --turns turns (each a user line, an assistant line
// calling a tool, its result, and an answer line: 4 lines) that grows by one turn at a time.
//
// 1. The importer alone, in this process: what each append costs when the whole file is imported again (what
//    --follow did before: `importTranscript(text, { final: false })` of the whole text; the read of the file is not
//    counted) and when only the appended bytes are read (`Follow.Follower.push`), at three file sizes; and the
//    throughput of each over the whole file (lines per second: one whole import; the follower fed 64 KB pieces).
// 2. The real CLI, end to end: `pivot import --follow` (a child process, `--conditions=@pivot/source`) following the
//    file with --turns turns already stored; each of --appends turns is appended and timed until the child reports
//    the new events stored (its "+N events" line): the read, the import, the SQLite append and the poll's wait (the
//    follower looks every 250 ms, so about 125 ms of each figure is that wait). `--bin` runs another checkout's
//    packages/cli/src/bin.ts instead, to compare with what this replaces.
//
//   node --conditions=@pivot/source scripts/bench/follow.ts [--turns 5000] [--appends 20] [--bin path/to/bin.ts]

import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { Follow, importTranscript } from "@pivot/agents"

const { values } = parseArgs({
  options: {
    turns: { type: "string", default: "5000" },
    appends: { type: "string", default: "20" },
    bin: { type: "string", default: fileURLToPath(new URL("../../packages/cli/src/bin.ts", import.meta.url)) },
  },
})
const turns = Number(values.turns)
const appends = Number(values.appends)
const load = () => os.loadavg()[0]!.toFixed(1)
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

const SESSION = "bench-follow-0000-4000-8000-000000000001"
/** The 4 lines of turn `t` of a Claude Code session (user, assistant tool call, tool result, assistant answer). */
const turn = (t: number): string => {
  const at = (k: number) => new Date(Date.UTC(2026, 0, 1) + (t * 4 + k) * 1000).toISOString()
  const base = { sessionId: SESSION, isSidechain: false, cwd: "/work/project", version: "2.1.332" }
  const line = (k: number, entry: Record<string, unknown>) =>
    JSON.stringify({
      ...base,
      uuid: `u-${t}-${k}`,
      parentUuid: k === 0 && t === 0 ? null : `u-${t}-${k - 1}`,
      timestamp: at(k),
      ...entry,
    })
  const usage = {
    input_tokens: 3,
    output_tokens: 40,
    cache_read_input_tokens: 20_000 + t * 100,
    cache_creation_input_tokens: 100,
  }
  const model = "claude-sonnet-4-6"
  return [
    line(0, { type: "user", message: { role: "user", content: `Question ${t}: what does src/file${t}.ts export?` } }),
    line(1, {
      type: "assistant",
      message: {
        id: `msg_${t}a`,
        role: "assistant",
        model,
        content: [
          { type: "tool_use", id: `toolu_${t}`, name: "Read", input: { file_path: `/work/project/src/file${t}.ts` } },
        ],
        stop_reason: "tool_use",
        usage,
      },
    }),
    line(2, {
      type: "user",
      message: {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: `toolu_${t}`, content: `export const value${t} = ${t}\n`.repeat(20) },
        ],
      },
    }),
    line(3, {
      type: "assistant",
      message: {
        id: `msg_${t}b`,
        role: "assistant",
        model,
        content: [{ type: "text", text: `src/file${t}.ts exports value${t}.` }],
        stop_reason: "end_turn",
        usage,
      },
    }),
  ]
    .map((l) => `${l}\n`)
    .join("")
}

const all = Array.from({ length: turns + appends }, (_, t) => turn(t))
const whole = all.slice(0, turns).join("")
const mb = (n: number) => (n / 1e6).toFixed(1)
console.log(
  `follow benchmark: ${turns.toLocaleString("en-US")} turns (${(turns * 4).toLocaleString("en-US")} lines, ${mb(Buffer.byteLength(whole))} MB), ${os.cpus().length} CPUs, load ${load()}`,
)

// 1. The importer alone.
console.log("")
console.log(
  "| file size | one append, whole file imported again (ms, median) | one append, appended bytes only (ms, median) |",
)
console.log("|---|---:|---:|")
for (const share of [0.1, 0.5, 1]) {
  const upTo = Math.max(1, Math.floor(turns * share))
  const prefix = all.slice(0, upTo).join("")
  const follower = new Follow.Follower()
  follower.push(Buffer.from(prefix))
  const before: Array<number> = []
  const after: Array<number> = []
  let text = prefix
  for (let k = 0; k < 5; k++) {
    const added = all[upTo + k]!
    text += added
    let t0 = performance.now()
    importTranscript(text, { final: false })
    before.push(performance.now() - t0)
    t0 = performance.now()
    follower.push(Buffer.from(added))
    after.push(performance.now() - t0)
  }
  console.log(
    `| ${mb(Buffer.byteLength(prefix))} MB (${(upTo * 4).toLocaleString("en-US")} lines) | ${median(before).toFixed(1)} | ${median(after).toFixed(2)} |`,
  )
}
{
  const bytes = Buffer.from(whole)
  let t0 = performance.now()
  importTranscript(whole, { final: false })
  const once = performance.now() - t0
  t0 = performance.now()
  const follower = new Follow.Follower()
  for (let i = 0; i < bytes.length; i += 65_536) follower.push(bytes.subarray(i, i + 65_536))
  const fed = performance.now() - t0
  const lines = turns * 4
  console.log("")
  console.log(
    `throughput: whole import ${Math.round(lines / (once / 1000)).toLocaleString("en-US")} lines/s; follower fed 64 KB pieces ${Math.round(lines / (fed / 1000)).toLocaleString("en-US")} lines/s (load ${load()})`,
  )
}

// 2. The CLI, end to end.
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-bench-follow-"))
const file = path.join(dir, "session.jsonl")
const db = path.join(dir, "session.db")
fs.writeFileSync(file, whole)
const child: ChildProcess = spawn(
  process.execPath,
  ["--conditions=@pivot/source", path.resolve(values.bin), "import", file, "--follow", "--db", db],
  { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, NO_COLOR: "1" } },
)
let output = ""
const waiters: Array<{ readonly test: (s: string) => boolean; readonly resolve: () => void }> = []
child.stdout?.on("data", (d: Buffer) => {
  output += d.toString()
  for (const w of [...waiters])
    if (w.test(output)) {
      waiters.splice(waiters.indexOf(w), 1)
      w.resolve()
    }
})
child.stderr?.resume()
const until = (test: (s: string) => boolean) =>
  new Promise<void>((resolve) => {
    if (test(output)) resolve()
    else waiters.push({ test, resolve })
  })
const t0 = performance.now()
await until((s) => s.includes("following "))
const startMs = performance.now() - t0
const latencies: Array<number> = []
for (let k = 0; k < appends; k++) {
  const seen = (output.match(/\+\d+ events?/g) ?? []).length
  const t = performance.now()
  fs.appendFileSync(file, all[turns + k]!)
  await until((s) => (s.match(/\+\d+ events?/g) ?? []).length > seen)
  latencies.push(performance.now() - t)
}
child.kill("SIGTERM")
fs.rmSync(dir, { recursive: true, force: true })
const sorted = [...latencies].sort((a, b) => a - b)
console.log("")
console.log(
  `CLI (${path.relative(process.cwd(), path.resolve(values.bin))}): first import and follow start ${(startMs / 1000).toFixed(1)} s; ` +
    `append → stored, ${appends} appends: median ${median(latencies).toFixed(0)} ms, min ${sorted[0]!.toFixed(0)} ms, max ${sorted.at(-1)!.toFixed(0)} ms (load ${load()})`,
)
