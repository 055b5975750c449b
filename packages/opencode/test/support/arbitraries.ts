/**
 * Generated OpenCode exports: turns of a user message and one to three assistant messages, with every tool status,
 * pruned outputs, dropped part types, errors and missing finishes, in shuffled key and array order; and exports with
 * compactions of any shape: pending ones, messages recorded between marker and summary, finished, errored, failed,
 * unfinished and missing summaries, several pivots, continue messages, and tail starts anywhere (before the marker, at
 * it, after it, unknown).
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

/** Where a compaction's `tail_start_id` points. */
export type TailStart =
  | { readonly kind: "none" }
  | { readonly kind: "before"; readonly back: number }
  | { readonly kind: "marker" }
  | { readonly kind: "after"; readonly forward: number }
  | { readonly kind: "unknown" }

/** A compaction: its marker, turns recorded while it was pending, its summary, and the continue message. */
export interface CompactionSpec {
  readonly compaction: true
  readonly auto: boolean
  readonly overflow: boolean
  readonly tailStart: TailStart
  readonly between: ReadonlyArray<TurnSpec>
  /** finished; errored (error set, finish "stop"); failed (finish "error"); unfinished (no finish); missing. */
  readonly summary: "finished" | "errored" | "failed" | "unfinished" | "missing"
  readonly continued: boolean
}

type Segment = TurnSpec | CompactionSpec

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

/** Builds the export of the given turns and compactions (ids ascending, times ascending, OpenCode's shapes). */
export const build = (segments: ReadonlyArray<Segment>): RawExport => {
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
  const addTurn = (t: TurnSpec) => {
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
  const addCompaction = (c: CompactionSpec) => {
    const markerId = `msg_${pad(++m)}`
    const marker: RawMessage = {
      info: { id: markerId, sessionID, role: "user", time: { created: tick() }, agent: "build", model: MODELS[0] },
      parts: [
        {
          id: `prt_${pad(++p)}`,
          sessionID,
          messageID: markerId,
          type: "compaction",
          auto: c.auto,
          ...(c.overflow ? { overflow: true } : {}),
        },
      ],
    }
    const before = messages.map((x) => x.info.id)
    messages.push(marker)
    for (const t of c.between) addTurn(t)
    const afterIds = messages.slice(messages.indexOf(marker) + 1).map((x) => x.info.id)
    if (c.summary !== "missing") {
      const id = `msg_${pad(++m)}`
      afterIds.push(id)
      const finish = c.summary === "failed" ? "error" : c.summary === "unfinished" ? undefined : "stop"
      messages.push({
        info: {
          id,
          sessionID,
          role: "assistant",
          parentID: markerId,
          time: { created: tick(), ...(finish === undefined ? {} : { completed: tick() }) },
          modelID: MODELS[0].modelID,
          providerID: MODELS[0].providerID,
          mode: "compaction",
          agent: "compaction",
          path: { cwd: "/", root: "/" },
          cost: 0,
          tokens: { input: 10, output: 5, reasoning: 0, cache: { read: 0, write: 0 } },
          summary: true,
          ...(finish === undefined ? {} : { finish }),
          ...(c.summary === "errored" || c.summary === "failed"
            ? { error: { name: "APIError", data: { message: "summariser down", isRetryable: false } } }
            : {}),
        },
        parts: [
          { id: `prt_${pad(++p)}`, sessionID, messageID: id, type: "text", text: `## Objective\n- summary ${id}` },
        ],
      })
    }
    const tail = c.tailStart
    const start =
      tail.kind === "before"
        ? before[before.length - 1 - (tail.back % Math.max(1, before.length))]
        : tail.kind === "marker"
          ? markerId
          : tail.kind === "after"
            ? afterIds[tail.forward % Math.max(1, afterIds.length)]
            : tail.kind === "unknown"
              ? "msg_000000"
              : undefined
    if (start !== undefined) marker.parts[0]!.tail_start_id = start
    if (c.continued && c.summary === "finished") {
      const id = `msg_${pad(++m)}`
      messages.push({
        info: { id, sessionID, role: "user", time: { created: tick() }, agent: "build", model: MODELS[0] },
        parts: [
          {
            id: `prt_${pad(++p)}`,
            sessionID,
            messageID: id,
            type: "text",
            text: "Continue if you have next steps.",
            synthetic: true,
            metadata: { compaction_continue: true },
          },
        ],
      })
    }
  }
  for (const segment of segments)
    if ("compaction" in segment) addCompaction(segment)
    else addTurn(segment)
  return { info: { id: sessionID, title: "generated", time: { created: T0, updated: tick() } }, messages }
}

/** Generated exports without compaction. */
export const exportArb: fc.Arbitrary<RawExport> = fc.array(turn, { minLength: 1, maxLength: 5 }).map(build)

const tailStartArb: fc.Arbitrary<TailStart> = fc.oneof(
  fc.constant<TailStart>({ kind: "none" }),
  { weight: 3, arbitrary: fc.nat(8).map((back): TailStart => ({ kind: "before", back })) },
  fc.constant<TailStart>({ kind: "marker" }),
  fc.nat(4).map((forward): TailStart => ({ kind: "after", forward })),
  fc.constant<TailStart>({ kind: "unknown" }),
)

/** A compaction of any shape. */
export const compactionArb: fc.Arbitrary<CompactionSpec> = fc.record({
  compaction: fc.constant(true as const),
  auto: fc.boolean(),
  overflow: fc.boolean(),
  tailStart: tailStartArb,
  between: fc.oneof({ weight: 3, arbitrary: fc.constant([]) }, fc.array(turn, { minLength: 1, maxLength: 2 })),
  summary: fc.constantFrom(
    "finished" as const,
    "finished" as const,
    "finished" as const,
    "errored" as const,
    "failed" as const,
    "unfinished" as const,
    "missing" as const,
  ),
  continued: fc.boolean(),
})

/** Generated exports with turns and compactions of any shape, in any number. */
export const compactedExportArb: fc.Arbitrary<RawExport> = fc
  .array(fc.oneof({ weight: 3, arbitrary: turn }, { weight: 1, arbitrary: compactionArb }), {
    minLength: 1,
    maxLength: 10,
  })
  .map(build)

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
