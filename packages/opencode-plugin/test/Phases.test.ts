// The plugin's per-phase counters (ADR 0056): a phase is recorded only when the bench's sink is there, with its name,
// wall time and the process's CPU meanwhile, whether its body succeeds or fails; the body's answer is unchanged.
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import type { MessageWithParts } from "../src/OpenCode.ts"
import * as Phases from "../src/Phases.ts"
import * as Plugin from "../src/Plugin.ts"

const holder = globalThis as { [Phases.SINK]?: unknown }
const folders: Array<string> = []
afterEach(() => {
  delete holder[Phases.SINK]
  for (const folder of folders.splice(0)) Fs.rmSync(folder, { recursive: true, force: true })
})

describe("Phases.timed", () => {
  it("given no sink, then it records nothing and answers the body's value", async () => {
    expect(await Phases.timed("x", async () => 42)).toBe(42)
    expect(holder[Phases.SINK]).toBeUndefined()
  })

  it("given a sink, then it records one phase per call, failed ones too, with the body's answer or failure unchanged", async () => {
    const sink: Array<Phases.Phase> = []
    holder[Phases.SINK] = sink
    const before = Date.now()
    expect(await Phases.timed("ok", async () => "answer")).toBe("answer")
    await expect(Phases.timed("failed", () => Promise.reject(new Error("no")))).rejects.toThrow("no")
    expect(sink.map((p) => p.name)).toEqual(["ok", "failed"])
    for (const p of sink) {
      expect(p.at).toBeGreaterThanOrEqual(before - 1)
      expect(p.ms).toBeGreaterThanOrEqual(0)
      expect(p.cpuMs).toBeGreaterThanOrEqual(0)
    }
  })

  it("given a sink that is not an array, then it records nothing", async () => {
    holder[Phases.SINK] = { not: "an array" }
    expect(await Phases.timed("x", async () => 1)).toBe(1)
    expect(holder[Phases.SINK]).toEqual({ not: "an array" })
  })
})

const fixture = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../opencode/test/fixtures/pruned.json")

describe("the plugin's phases", () => {
  it("given the bench's sink, then a drive call records the store's opening, the sync's read and record, the window and the HUD", async () => {
    const sink: Array<Phases.Phase> = []
    holder[Phases.SINK] = sink
    const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "pivot-phases-"))
    folders.push(directory)
    const data = JSON.parse(Fs.readFileSync(fixture, "utf8")) as {
      info: { id: string }
      messages: Array<MessageWithParts>
    }
    const hooks = await Plugin.make(
      {
        client: {
          session: {
            get: async () => ({ data: data.info }),
            messages: async () => ({ data: data.messages }),
            summarize: async () => ({ data: true }),
            list: async () => ({ data: [{ id: data.info.id }] }),
          },
        },
        directory,
      },
      { drive: true },
      {},
    )
    try {
      await hooks["experimental.chat.messages.transform"]({}, { messages: structuredClone(data.messages) })
    } finally {
      await hooks.dispose()
    }
    const names = new Set(sink.map((p) => p.name))
    for (const name of ["store.open", "sync.read", "sync.record call", "hud.overhead", "window", "hud"])
      expect(names).toContain(name)
    expect(sink.filter((p) => p.name === "store.open")).toHaveLength(1)
  })
})
