/**
 * Generated Codex CLI rollouts with their reference: a rollout is built from a small model (turns of model calls with
 * reasoning, text and function calls, compactions keeping some of the visible user messages, noise lines), written the
 * way Codex writes it (items, then the call's `token_count`, repeated at times with unchanged totals, then the
 * outputs; `compacted` with its `replacement_history`), and the model says, independently of the importer, what Codex
 * sent at the end of each stretch between compactions.
 */
import fc from "fast-check"

export type Item =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "reasoning"; readonly text: string }
  | { readonly type: "call"; readonly output: string; readonly failed: boolean }

export type Op =
  | {
      readonly kind: "turn"
      readonly calls: ReadonlyArray<{ readonly items: ReadonlyArray<Item>; readonly repeatCount: boolean }>
    }
  | { readonly kind: "compact"; readonly summary: string; readonly keep: ReadonlyArray<boolean> }
  | { readonly kind: "noise" }

const word = fc.stringMatching(/^[a-z][a-z ]{0,9}$/)
const item: fc.Arbitrary<Item> = fc.oneof(
  word.map((text) => ({ type: "text" as const, text })),
  word.map((text) => ({ type: "reasoning" as const, text })),
  fc.record({ output: word, failed: fc.boolean() }).map((c) => ({ type: "call" as const, ...c })),
)

export const opsArb: fc.Arbitrary<ReadonlyArray<Op>> = fc.array(
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({
        kind: fc.constant("turn" as const),
        calls: fc.array(
          fc.record({ items: fc.array(item, { minLength: 1, maxLength: 3 }), repeatCount: fc.boolean() }),
          {
            minLength: 1,
            maxLength: 3,
          },
        ),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        kind: fc.constant("compact" as const),
        summary: word,
        keep: fc.array(fc.boolean(), { maxLength: 8 }),
      }),
    },
    { weight: 1, arbitrary: fc.constant({ kind: "noise" as const }) },
  ),
  { minLength: 1, maxLength: 10 },
)

export interface Generated {
  readonly text: string
  /** The window at the end of each stretch: before the first compaction, then after each. */
  readonly segments: ReadonlyArray<ReadonlyArray<string>>
  readonly calls: number
}

export const generate = (ops: ReadonlyArray<Op>): Generated => {
  const lines: Array<string> = []
  let n = 0
  const line = (type: string, payload: unknown) => {
    n++
    lines.push(JSON.stringify({ timestamp: new Date(Date.UTC(2025, 9, 2, 8) + n * 1000).toISOString(), type, payload }))
  }
  line("session_meta", { id: "0199a3c2-0000-7000-8000-000000000001", cwd: "/w", model_provider: "openai" })
  const segments: Array<Array<string>> = [[]]
  let visibleUsers: Array<string> = []
  const totals = { input_tokens: 0, cached_input_tokens: 0, output_tokens: 0, reasoning_output_tokens: 0 }
  let calls = 0
  let turn = 0
  for (const op of ops) {
    const current = segments[segments.length - 1]!
    if (op.kind === "noise") {
      line("event_msg", { type: "agent_reasoning", text: "noise" })
      continue
    }
    if (op.kind === "compact") {
      const kept = visibleUsers.filter((_, i) => op.keep[i] === true)
      line("compacted", {
        message: op.summary,
        replacement_history: [
          ...kept.map((text) => ({ type: "message", role: "user", content: [{ type: "input_text", text }] })),
          { type: "message", role: "user", content: [{ type: "input_text", text: op.summary }] },
        ],
      })
      // Named deviation: Codex sends the kept user messages, then its summary; pivot the summary, then them.
      segments.push([`summary:${op.summary}`, ...kept.map((t) => `user:${t}`)])
      visibleUsers = [...kept]
      continue
    }
    const user = `turn ${turn++}`
    line("response_item", { type: "message", role: "user", content: [{ type: "input_text", text: user }] })
    line("event_msg", { type: "user_message", message: user })
    line("turn_context", { model: "gpt-5-codex", cwd: "/w" })
    current.push(`user:${user}`)
    visibleUsers.push(user)
    for (const call of op.calls) {
      calls++
      const parts: Array<string> = []
      const outputs: Array<{ id: string; output: string; failed: boolean }> = []
      call.items.forEach((it, i) => {
        if (it.type === "text") {
          line("response_item", {
            type: "message",
            role: "assistant",
            content: [{ type: "output_text", text: it.text }],
          })
          parts.push(`text:${it.text}`)
        } else if (it.type === "reasoning") {
          line("response_item", {
            type: "reasoning",
            summary: [{ type: "summary_text", text: it.text }],
            encrypted_content: "x",
          })
          parts.push(`reasoning:${it.text}`)
        } else {
          const id = `call_${calls}_${i}`
          line("response_item", { type: "function_call", name: "shell", arguments: JSON.stringify({ i }), call_id: id })
          outputs.push({ id, output: it.output, failed: it.failed })
          parts.push(`tool:shell:${id}:${it.failed ? "error" : "completed"}:${it.output}`)
        }
      })
      const last = {
        input_tokens: 100 * calls,
        cached_input_tokens: 50 * calls,
        output_tokens: call.items.length + 5,
        reasoning_output_tokens: 5,
      }
      for (const k of Object.keys(totals) as Array<keyof typeof totals>) totals[k] += last[k]
      const count = { type: "token_count", info: { total_token_usage: { ...totals }, last_token_usage: last } }
      line("event_msg", count)
      if (call.repeatCount) {
        line("turn_context", { model: "gpt-5-codex", cwd: "/w" })
        line("event_msg", count)
      }
      for (const o of outputs)
        line("response_item", {
          type: "function_call_output",
          call_id: o.id,
          output: o.failed ? { content: o.output, success: false } : o.output,
        })
      current.push(`assistant:${parts.join("|")}`)
    }
  }
  return { text: lines.map((l) => `${l}\n`).join(""), segments, calls }
}
