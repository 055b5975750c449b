// Several processes opening the same new SQLite file at the same moment (issue 12, defect 1): each one migrates it
// and switches it to write-ahead logging, and SQLite answers some of them SQLITE_BUSY without waiting. Every open
// must succeed, round after round, and every process's first append must be there.

import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { EventStore } from "../src/index.ts"

const writer = fileURLToPath(new URL("./support/writer.ts", import.meta.url))
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-store-first-open-"))
const PROCESSES = 4
const ROUNDS = Number(process.env.PIVOT_FIRST_OPEN_ROUNDS ?? 60)

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

/** The next line a child prints, one at a time. */
const lineReader = (child: ChildProcess) => {
  let buffer = ""
  let waiting: ((line: string) => void) | undefined
  const ready: Array<string> = []
  child.stdout!.setEncoding("utf8")
  child.stdout!.on("data", (chunk: string) => {
    buffer += chunk
    for (let newline = buffer.indexOf("\n"); newline >= 0; newline = buffer.indexOf("\n")) {
      const line = buffer.slice(0, newline)
      buffer = buffer.slice(newline + 1)
      if (waiting !== undefined) {
        const resolve = waiting
        waiting = undefined
        resolve(line)
      } else ready.push(line)
    }
  })
  return () =>
    new Promise<string>((resolve) => {
      const line = ready.shift()
      if (line !== undefined) resolve(line)
      else waiting = resolve
    })
}

const countEvents = (file: string) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* EventStore
      return yield* store.streamVersion("session-shared")
    }).pipe(Effect.provide(EventStore.layerSqlite({ filename: file }))),
  )

describe("first open of a new SQLite file by several processes at once", () => {
  it(`given ${PROCESSES} processes opening the same new file together, ${ROUNDS} times, then every open succeeds`, async () => {
    const children = Array.from({ length: PROCESSES }, (_, i) =>
      spawn(process.execPath, ["--conditions=@pivot/source", writer, "open", `p${i}`], {
        stdio: ["pipe", "pipe", "inherit"],
      }),
    )
    const next = children.map(lineReader)
    const failures: Array<string> = []
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const file = path.join(dir, `fresh-${round}.db`)
        // One write per child, back to back: the processes are already running, so their opens overlap.
        for (const child of children) child.stdin!.write(`${file}\n`)
        const results = await Promise.all(next.map((read) => read()))
        failures.push(...results.filter((line) => line !== "opened").map((line) => `round ${round}: ${line}`))
        expect(await countEvents(file)).toBe(results.filter((line) => line === "opened").length)
      }
    } finally {
      for (const child of children) child.stdin!.end()
    }
    expect(failures).toEqual([])
  }, 120_000)
})
