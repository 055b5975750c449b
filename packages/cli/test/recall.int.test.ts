/** `pivot inspect` shows what the model re-read through `context_recall` (the `ContextRecalled` events). */
import * as fs from "node:fs"
import * as path from "node:path"
import { EventStore } from "@pivot/store"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { pivot, realExport, realSessionId, tempDir } from "./support/audit.ts"

const dir = tempDir()
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const recalled = (data: Record<string, unknown>) => ({ _tag: "ContextRecalled", at: 1_767_000_000_000, ...data })

describe("pivot inspect: recalls", () => {
  it("given a session whose model recalled by id and by query, then inspect lists each recall, text and JSON", async () => {
    const db = path.join(dir, "recall.db")
    expect((await pivot("import", realExport, "--db", db)).code).toBe(0)
    const plain = await pivot("inspect", "--db", db, "--session", realSessionId)
    expect(plain.stdout).not.toContain("recalls")
    await Effect.runPromise(
      Effect.gen(function* () {
        const store = yield* EventStore
        yield* store.append(`session-${realSessionId}`, "any", [
          {
            id: "evt_recall_1",
            type: "ContextRecalled",
            version: 1,
            data: recalled({ id: "prt_a1", found: ["prt_a1"], chars: 16_000, truncated: true }),
          },
          {
            id: "evt_recall_2",
            type: "ContextRecalled",
            version: 1,
            data: recalled({ query: "failing test", found: [], chars: 52, truncated: false }),
          },
        ])
      }).pipe(Effect.provide(EventStore.layerSqlite({ filename: db }))),
    )
    const text = await pivot("inspect", "--db", db, "--session", realSessionId)
    expect(text.code).toBe(0)
    const at = text.out.indexOf("recalls (2: what the model re-read through context_recall)")
    expect(at).toBeGreaterThan(0)
    expect(text.out.slice(at + 1, at + 4).map((l) => l.split(/\s+/).filter((w) => w !== ""))).toEqual([
      ["version", "asked", "found", "chars"],
      ["37", "prt_a1", "prt_a1", "16,000", "(cut)"],
      ["38", "query", '"failing', 'test"', "nothing", "52"],
    ])
    const json = JSON.parse((await pivot("inspect", "--db", db, "--session", realSessionId, "--format", "json")).stdout)
    expect(json.recalls).toEqual([
      { version: 37, id: "prt_a1", found: ["prt_a1"], chars: 16_000, truncated: true },
      { version: 38, query: "failing test", found: [], chars: 52, truncated: false },
    ])
  })
})
