// Two processes appending to one stream at the same time, each reading the version and appending with it exactly,
// retrying on conflict: every conflict is detected (no two acknowledged appends claim a version), nothing is lost,
// nothing is duplicated. Run on SQLite (one file) and PostgreSQL (one schema).

import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"
import { afterAll, describe, expect, inject, it } from "vitest"
import { EventStore, type RecordedEvent } from "../src/index.ts"
import { dropSchemas } from "./support/postgres.ts"

const writer = fileURLToPath(new URL("./support/writer.ts", import.meta.url))
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-store-race-"))
const STREAM = "session-shared"
const PER_WRITER = 120

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const readShared = Effect.gen(function* () {
  const store = yield* EventStore
  return yield* store.read(STREAM)
})

interface Summary {
  readonly acked: ReadonlyArray<{ readonly id: string; readonly from: number; readonly to: number }>
  readonly conflicts: number
}

const lines = (child: ChildProcess, onLine: (line: string) => void) => {
  let buffer = ""
  child.stdout!.setEncoding("utf8")
  child.stdout!.on("data", (chunk: string) => {
    buffer += chunk
    let newline = buffer.indexOf("\n")
    while (newline >= 0) {
      onLine(buffer.slice(0, newline))
      buffer = buffer.slice(newline + 1)
      newline = buffer.indexOf("\n")
    }
  })
}

/** Starts the writers, releases them together, and collects their summaries. */
const race = async (argsFor: (tag: string) => ReadonlyArray<string>): Promise<ReadonlyArray<Summary>> => {
  const children = ["a", "b"].map((tag) =>
    spawn(process.execPath, ["--conditions=@pivot/source", writer, "race", ...argsFor(tag), String(PER_WRITER)], {
      stdio: ["pipe", "pipe", "pipe"],
    }),
  )
  let ready = 0
  const summaries = children.map(
    (child) =>
      new Promise<Summary>((resolve, reject) => {
        let summary: Summary | undefined
        let err = ""
        child.stderr!.on("data", (chunk) => {
          err += chunk
        })
        lines(child, (line) => {
          if (line === "ready") {
            if (++ready === children.length) for (const c of children) c.stdin!.end("go\n")
          } else summary = JSON.parse(line)
        })
        child.on("close", (code) =>
          code === 0 && summary !== undefined ? resolve(summary) : reject(new Error(`writer failed (${code}): ${err}`)),
        )
      }),
  )
  return Promise.all(summaries)
}

const verify = (events: ReadonlyArray<RecordedEvent>, summaries: ReadonlyArray<Summary>) => {
  const acked = summaries.flatMap((s) => s.acked)
  expect(acked.length).toBe(2 * PER_WRITER)
  // Nothing lost, nothing extra: the stream is exactly the acknowledged batches, at the versions acknowledged.
  expect(events.length).toBe(acked.reduce((sum, a) => sum + (a.to - a.from + 1), 0))
  expect(events.map((e) => e.streamVersion)).toEqual(events.map((_, i) => i + 1))
  expect(new Set(events.map((e) => e.id)).size).toBe(events.length)
  for (const a of acked) {
    const ids = events.slice(a.from - 1, a.to).map((e) => e.id)
    expect(ids).toEqual(Array.from({ length: a.to - a.from + 1 }, (_, k) => `${a.id}-${k}`))
  }
  return summaries.reduce((sum, s) => sum + s.conflicts, 0)
}

describe("two processes appending to one stream", () => {
  it("SQLite: every conflict detected, no duplicate, nothing lost", async () => {
    // Every run is verified; a run on a loaded machine can end without the writers overlapping, so up to three runs
    // are made until one really raced (conflicts > 0).
    let conflicts = 0
    for (let attempt = 0; attempt < 3 && conflicts === 0; attempt++) {
      const file = path.join(dir, `race-${attempt}.db`)
      const summaries = await race((tag) => ["sqlite", file, tag])
      const events = await Effect.runPromise(
        readShared.pipe(Effect.provide(EventStore.layerSqlite({ filename: file }))),
      )
      conflicts = verify(events, summaries)
    }
    expect(conflicts).toBeGreaterThan(0)
  }, 150_000)

  it("PostgreSQL: every conflict detected, no duplicate, nothing lost", async () => {
    const setupError = inject("pgError")
    if (setupError !== "") throw new Error(setupError)
    const url = inject("pgUrl")
    let conflicts = 0
    for (let attempt = 0; attempt < 3 && conflicts === 0; attempt++) {
      const schema = `pivot_race_${process.pid}_${attempt}`
      try {
        const summaries = await race((tag) => ["pg", url, schema, tag])
        const events = await Effect.runPromise(
          readShared.pipe(Effect.provide(EventStore.layerPostgres({ url, schema }))),
        )
        conflicts = verify(events, summaries)
      } finally {
        dropSchemas(url, [schema])
      }
    }
    expect(conflicts).toBeGreaterThan(0)
  }, 150_000)
})
