/** `pivot inspect` shows what the model re-read through `context_recall` (the `ContextRecalled` events). */
import * as fs from "node:fs"
import * as path from "node:path"
import { Ids, Tokens } from "@pivot/core"
import { ContextManager } from "@pivot/runtime"
import { EventStore, ReadModels } from "@pivot/store"
import { Effect, Layer } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { SAMPLES } from "../../core/test/support/secrets.ts"
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

describe("pivot inspect: the model's own words are printed redacted (issue 18 #3)", () => {
  it("given a focus note and a recall query stored raw (redactSecrets off, or an older pivot), then inspect prints neither secret, text or JSON", async () => {
    const db = path.join(dir, "raw-focus.db")
    const secrets = SAMPLES.map((s) => s.text).join("\n")
    await Effect.runPromise(
      Effect.gen(function* () {
        const cm = yield* ContextManager
        yield* cm.recordUserMessage("ses_raw", { text: "refactor the parser" })
        yield* cm.recordAssistantStep("ses_raw", {
          parts: [{ type: "text", text: "working on it" }],
          usage: { ...Tokens.zero, input: 30_000 },
          finish: "tool-calls",
        })
        yield* cm.compact("ses_raw", { requestedBy: "model", focus: `keep ${secrets}` })
        yield* cm.recall("ses_raw", { query: `parser ${secrets}` })
      }).pipe(
        Effect.provide(
          ContextManager.layer({
            model: {
              ref: { providerId: "anthropic", modelId: "claude-test" },
              limits: { context: 100_000, output: 32_000 },
            },
            redactSecrets: false,
          }).pipe(Layer.provide(Ids.Ids.layer), Layer.provide(ReadModels.layerSqlite({ filename: db }))),
        ),
      ),
    )
    const text = await pivot("inspect", "--db", db, "--session", "ses_raw")
    const json = await pivot("inspect", "--db", db, "--session", "ses_raw", "--format", "json")
    expect(text.code).toBe(0)
    expect(text.stdout).toContain("asked by the model (focus:")
    expect(JSON.parse(json.stdout).recalls).toHaveLength(1)
    for (const out of [text.stdout, json.stdout])
      expect(
        SAMPLES.filter((s) => out.includes(s.secret) || out.includes(JSON.stringify(s.secret).slice(1, -1))).map(
          (s) => s.kind,
        ),
      ).toEqual([])
  })
})
