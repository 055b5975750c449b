/**
 * `pivot import --follow` under a live writer, with real processes: this test appends a generated Claude Code
 * transcript line by line (some lines in two writes, as a writer caught mid-line leaves them), while a `pivot import
 * --follow` child stores it; the child is SIGKILLed twice while lines keep coming and started again each time. At
 * the end the stored events must be exactly what the whole file imports to: nothing lost, nothing twice.
 * Slow lane: it spawns the CLI.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { importTranscript } from "@pivot/agents"
import { Events } from "@pivot/core"
import { EventStore, SessionLog } from "@pivot/store"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { generate, type Op } from "../../agents/test/support/claudeCode.ts"
import { stopped, tempDir } from "./support/audit.ts"

const dir = tempDir()
const children: Array<ChildProcess> = []

const bin = fileURLToPath(new URL("../src/bin.ts", import.meta.url))
const follow = (file: string, db: string): ChildProcess => {
  const child = spawn(process.execPath, ["--conditions=@pivot/source", bin, "import", file, "--follow", "--db", db], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, NO_COLOR: "1" },
  })
  child.stdout?.resume()
  child.stderr?.resume()
  children.push(child)
  return child
}
// Each child's exit is awaited before the folder goes: one still running could create a file in it meanwhile.
afterAll(async () => {
  await Promise.all(children.map((child) => stopped(child, "SIGKILL")))
  fs.rmSync(dir, { recursive: true, force: true })
})
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

// 36 turns of one to three calls with tools, thinking and text, three compactions among them, and noise lines.
const ops: Array<Op> = []
for (let t = 0; t < 36; t++) {
  ops.push({
    kind: "turn",
    user: `turn ${t}`,
    calls: [
      [
        { type: "thinking", text: `think ${t}` },
        { type: "tool", name: "Read", output: `file ${t}`, error: t % 7 === 0 },
      ],
      ...(t % 2 === 0 ? [[{ type: "text" as const, text: `answer ${t}` }]] : []),
    ],
  })
  if (t % 12 === 11) ops.push({ kind: "compact", auto: t !== 23, summary: `summary after ${t}` })
  if (t % 5 === 0) ops.push({ kind: "noise", type: "file-history-snapshot" })
}

const storedEvents = (db: string, sessionId: string) =>
  Effect.runPromise(
    SessionLog.read(sessionId).pipe(
      Effect.map((log) => log.map((l) => JSON.stringify(Events.encode(l.event)))),
      Effect.provide(EventStore.layerSqlite({ filename: db })),
    ),
  )

describe("pivot import --follow with a writer appending and the importer SIGKILLed (issue 33)", () => {
  it("given two SIGKILLs of the follower while lines keep coming, then the stored events are the file's, none lost or twice", async () => {
    const { text } = generate(ops)
    const lines = text.split("\n").filter((l) => l !== "")
    const file = path.join(dir, "live.jsonl")
    const db = path.join(dir, "live.db")
    fs.writeFileSync(file, "")
    const expected = importTranscript(text, { final: false })!
    const wanted = expected.events.map((e) => JSON.stringify(Events.encode(e)))

    let child = follow(file, db)
    const kills = new Set([Math.floor(lines.length / 3), Math.floor((2 * lines.length) / 3)])
    for (const [i, line] of lines.entries()) {
      if (i % 4 === 1) {
        // Half a line now, the rest later: the follower must wait for it.
        const half = Math.floor(line.length / 2)
        fs.appendFileSync(file, line.slice(0, half))
        await sleep(30)
        fs.appendFileSync(file, `${line.slice(half)}\n`)
      } else fs.appendFileSync(file, `${line}\n`)
      await sleep(15)
      if (kills.has(i)) {
        await stopped(child, "SIGKILL")
        child = follow(file, db)
      }
    }
    // Wait (bounded) until the follower has stored everything the file imports to, then stop it.
    let stored: Array<string> = []
    for (let tries = 0; tries < 240; tries++) {
      await sleep(250)
      stored = fs.existsSync(db) ? await storedEvents(db, expected.sessionId).catch(() => []) : []
      if (stored.length >= wanted.length) break
    }
    await stopped(child, "SIGTERM")
    expect(stored.length).toBe(wanted.length)
    expect(stored).toEqual(wanted)
    expect(expected.report.compactions).toBe(3)
  }, 180_000)
})

describe("pivot import --follow on a file that shrinks", () => {
  it("given the followed file truncated below what was read, then the follower stops with one line and exit 1, the stored events kept", async () => {
    const { text } = generate(ops.slice(0, 6))
    const file = path.join(dir, "shrinks.jsonl")
    const db = path.join(dir, "shrinks.db")
    fs.writeFileSync(file, text)
    const expected = importTranscript(text, { final: false })!
    const child = follow(file, db)
    let out = ""
    let err = ""
    child.stdout?.on("data", (d: Buffer) => {
      out += d.toString()
    })
    child.stderr?.on("data", (d: Buffer) => {
      err += d.toString()
    })
    for (let tries = 0; tries < 240 && !out.includes("following "); tries++) await sleep(250)
    expect(out).toContain("following ")
    fs.writeFileSync(file, text.slice(0, 10))
    const code = await new Promise<number | null>((resolve) => {
      if (child.exitCode !== null) resolve(child.exitCode)
      else child.once("exit", (c) => resolve(c))
    })
    expect(code).toBe(1)
    expect(err.trim().split("\n")).toEqual([
      expect.stringMatching(
        /^pivot import: .*shrinks\.jsonl shrank below the [\d,]+ bytes already read \(replaced or truncated\); stopped following$/,
      ),
    ])
    const stored = await storedEvents(db, expected.sessionId)
    expect(stored).toEqual(expected.events.map((e) => JSON.stringify(Events.encode(e))))
  }, 120_000)
})
