// The plugin's entry loads lazily: OpenCode loads it at start, before any session, and the hooks' heavy modules
// (pivot's store and runtime, effect) wait for the first hook call that has work to do. Checked in a Node process of
// its own, through its module loader (support/LoadProbe.ts). Slow: that process loads effect and pivot from source.
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, expect, it } from "vitest"

const probe = Path.join(Path.dirname(fileURLToPath(import.meta.url)), "support/LoadProbe.ts")
const folders: Array<string> = []
afterEach(() => {
  for (const folder of folders.splice(0)) Fs.rmSync(folder, { recursive: true, force: true })
})

it("given the plugin loaded, an event about no session and the tools' definitions, then neither its hooks, pivot's store nor effect are loaded; the first tool call loads them and is answered", () => {
  const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "pivot-lazy-"))
  folders.push(directory)
  const out = execFileSync(process.execPath, ["--conditions=@pivot/source", probe, directory], {
    encoding: "utf8",
    timeout: 120_000,
  })
  const steps = out
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>)
  expect(steps).toEqual([
    {
      step: "init",
      plugin: false,
      store: false,
      effect: false,
      tools: ["context_recall", "context_compact", "context_pin"],
    },
    { step: "event without a session", plugin: false, store: false, effect: false },
    { step: "tool definitions", plugin: false, store: false, effect: false },
    {
      step: "tool call",
      plugin: true,
      store: true,
      effect: true,
      // The hooks' own answer (no model is known before a chat message): the call reached Plugin.ts.
      answer: "No model is known for this session yet; compaction was not requested.",
    },
    { step: "disposed", plugin: true, store: true, effect: true },
  ])
}, 180_000)

it("given the built plugin (dist/index.js, as users load it), then it loads the bundle (its tools at start, its hooks at the first session hook) and no other module of pivot's packages nor any under node_modules (effect, zod)", () => {
  const directory = Fs.mkdtempSync(Path.join(Os.tmpdir(), "pivot-lazy-built-"))
  folders.push(directory)
  const out = execFileSync(process.execPath, [probe, directory, "built"], { encoding: "utf8", timeout: 120_000 })
  const steps = out
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>)
  const nothing = { plugin: false, store: false, effect: false, unbundled: [] }
  expect(steps).toEqual([
    { step: "init", ...nothing, bundle: false, tools: ["context_recall", "context_compact", "context_pin"] },
    { step: "event without a session", ...nothing, bundle: false },
    { step: "tool definitions", ...nothing, bundle: false },
    {
      step: "tool call",
      ...nothing,
      bundle: true,
      answer: "No model is known for this session yet; compaction was not requested.",
    },
    { step: "disposed", ...nothing, bundle: true },
  ])
}, 180_000)
