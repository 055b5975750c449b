/**
 * Generated OpenCode exports without compaction: turns of a user message and one to three assistant messages, with
 * every tool status, pruned outputs, dropped part types, errors and missing finishes, in shuffled key and array order.
 */
import fc from "fast-check"
import type { RawExport, RawMessage } from "./fixtures.ts"

const T0 = 1_760_000_000_000

type PartSpec =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "reasoning"; readonly text: string }
  | {
      readonly kind: "tool"
      readonly status: "pending" | "running" | "completed" | "error"
      readonly output: string
      readonly pruned: boolean
    }
  | { readonly kind: "dropped"; readonly type: "patch" | "snapshot" | "retry" | "agent" }
  | { readonly kind: "file" }

interface AssistantSpec {
  readonly steps: boolean
  readonly parts: ReadonlyArray<PartSpec>
  readonly finish: "stop" | "tool-calls" | "error" | undefined
  readonly error: boolean
}

interface TurnSpec {
  readonly user: ReadonlyArray<PartSpec>
  readonly model: 0 | 1
  readonly assistants: ReadonlyArray<AssistantSpec>
}

const text = fc.string({ maxLength: 60 })
const assistantPart: fc.Arbitrary<PartSpec> = fc.oneof(
  fc.record({ kind: fc.constant("text" as const), text }),
  fc.record({ kind: fc.constant("reasoning" as const), text }),
  fc.record({
    kind: fc.constant("tool" as const),
    status: fc.constantFrom("pending" as const, "running" as const, "completed" as const, "error" as const),
    output: fc.string({ maxLength: 200 }),
    pruned: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant("dropped" as const),
    type: fc.constantFrom("patch" as const, "snapshot" as const, "retry" as const),
  }),
)
const userPart: fc.Arbitrary<PartSpec> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("text" as const), text }) },
  { weight: 1, arbitrary: fc.constant<PartSpec>({ kind: "file" }) },
  { weight: 1, arbitrary: fc.constant<PartSpec>({ kind: "dropped", type: "agent" }) },
)
const assistant: fc.Arbitrary<AssistantSpec> = fc.record({
  steps: fc.boolean(),
  parts: fc.array(assistantPart, { maxLength: 5 }),
  finish: fc.constantFrom("stop" as const, "tool-calls" as const, "error" as const, undefined),
  error: fc.boolean(),
})
const turn: fc.Arbitrary<TurnSpec> = fc.record({
  user: fc.array(userPart, { minLength: 1, maxLength: 3 }),
  model: fc.constantFrom(0 as const, 1 as const),
  assistants: fc.array(assistant, { minLength: 0, maxLength: 3 }),
})

const MODELS = [
  { providerID: "anthropic", modelID: "claude-sonnet-4" },
  { providerID: "openai", modelID: "gpt-5" },
] as const

const pad = (n: number) => String(n).padStart(6, "0")

/** Builds the export of the given turns (ids ascending, times ascending, OpenCode's shapes). */
export const build = (turns: ReadonlyArray<TurnSpec>): RawExport => {
  const sessionID = "ses_generated"
  let m = 0
  let p = 0
  let clock = 0
  const tick = () => T0 + ++clock * 1000
  const messages: Array<RawMessage> = []
  const part = (messageID: string, spec: PartSpec): RawMessage["parts"][number] => {
    const base = { id: `prt_${pad(++p)}`, sessionID, messageID }
    switch (spec.kind) {
      case "text":
        return { ...base, type: "text", text: spec.text }
      case "reasoning":
        return { ...base, type: "reasoning", text: spec.text, time: { start: tick() } }
      case "file":
        return { ...base, type: "file", mime: "image/png", filename: "a.png", url: "data:image/png;base64,AAAA" }
      case "dropped":
        return spec.type === "patch"
          ? { ...base, type: "patch", hash: "abc", files: ["/a"] }
          : spec.type === "snapshot"
            ? { ...base, type: "snapshot", snapshot: "abc" }
            : spec.type === "retry"
              ? { ...base, type: "retry", attempt: 1, error: { name: "APIError", data: {} }, time: { created: tick() } }
              : { ...base, type: "agent", name: "explore" }
      case "tool": {
        const start = tick()
        const input = { command: "run" }
        const state =
          spec.status === "pending"
            ? { status: "pending", input, raw: "" }
            : spec.status === "running"
              ? { status: "running", input, time: { start } }
              : spec.status === "error"
                ? { status: "error", input, error: spec.output, time: { start, end: tick() } }
                : {
                    status: "completed",
                    input,
                    output: spec.output,
                    title: "",
                    metadata: {},
                    time: { start, end: tick(), ...(spec.pruned ? { compacted: start + 500_000 } : {}) },
                  }
        return { ...base, type: "tool", tool: "bash", callID: `call_${p}`, state }
      }
    }
  }
  for (const t of turns) {
    const userId = `msg_${pad(++m)}`
    const model = MODELS[t.model]
    messages.push({
      info: { id: userId, sessionID, role: "user", time: { created: tick() }, agent: "build", model },
      parts: t.user.map((spec) => part(userId, spec)),
    })
    for (const a of t.assistants) {
      const id = `msg_${pad(++m)}`
      const created = tick()
      const parts = [
        ...(a.steps ? [{ id: `prt_${pad(++p)}`, sessionID, messageID: id, type: "step-start" }] : []),
        ...a.parts.map((spec) => part(id, spec)),
        ...(a.steps && a.finish !== undefined
          ? [
              {
                id: `prt_${pad(++p)}`,
                sessionID,
                messageID: id,
                type: "step-finish",
                reason: a.finish,
                cost: 0,
                tokens: { input: 10, output: 5, reasoning: 0, cache: { read: 0, write: 0 } },
              },
            ]
          : []),
      ]
      messages.push({
        info: {
          id,
          sessionID,
          role: "assistant",
          parentID: userId,
          time: { created, ...(a.finish === undefined ? {} : { completed: tick() }) },
          modelID: model.modelID,
          providerID: model.providerID,
          mode: "build",
          agent: "build",
          path: { cwd: "/", root: "/" },
          cost: 0,
          tokens: { input: 10, output: 5, reasoning: 0, cache: { read: 0, write: 0 } },
          ...(a.finish === undefined ? {} : { finish: a.finish }),
          ...(a.error ? { error: { name: "APIError", data: { message: "boom", isRetryable: false } } } : {}),
        },
        parts,
      })
    }
  }
  return { info: { id: sessionID, title: "generated", time: { created: T0, updated: tick() } }, messages }
}

/** Generated exports without compaction. */
export const exportArb: fc.Arbitrary<RawExport> = fc.array(turn, { minLength: 1, maxLength: 5 }).map(build)

/** Reorders every object's keys by `order` (a permutation seed) and the messages array by `shuffle`. */
export const reorder = (value: unknown, seed: number): unknown => {
  if (Array.isArray(value)) return value.map((v, i) => reorder(v, seed + i))
  if (typeof value !== "object" || value === null) return value
  const keys = Object.keys(value)
  const rotated = keys.map((_, i) => keys[(i + seed) % keys.length]!)
  if (seed % 2 === 1) rotated.reverse()
  return Object.fromEntries(
    rotated.map((k) => [k, reorder((value as Record<string, unknown>)[k], seed * 31 + k.length)]),
  )
}
