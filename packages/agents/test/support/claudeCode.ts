/**
 * Generated Claude Code transcripts with their reference: a transcript is built from a small model (turns of API
 * calls with text, thinking and tool blocks, compactions, bookkeeping and unknown lines), written the way Claude Code
 * writes it (one line per content block sharing `message.id`, tool results in the next user entry, a compact
 * boundary then the summary entry), and the model says, independently of the importer, what Claude Code sent after
 * each compaction.
 */
import fc from "fast-check"

export type Block =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "thinking"; readonly text: string }
  | { readonly type: "tool"; readonly name: string; readonly output: string; readonly error: boolean }

export type Op =
  | { readonly kind: "turn"; readonly user: string; readonly calls: ReadonlyArray<ReadonlyArray<Block>> }
  | { readonly kind: "compact"; readonly auto: boolean; readonly summary: string }
  | { readonly kind: "noise"; readonly type: string }

const word = fc.stringMatching(/^[a-z][a-z ]{0,11}$/)

const block: fc.Arbitrary<Block> = fc.oneof(
  word.map((text) => ({ type: "text" as const, text })),
  word.map((text) => ({ type: "thinking" as const, text })),
  fc
    .record({ name: fc.constantFrom("Read", "Bash", "Grep"), output: word, error: fc.boolean() })
    .map((t) => ({ type: "tool" as const, ...t })),
)

/** A transcript's model: mostly turns, some compactions (back to back too) and noise lines. */
export const opsArb: fc.Arbitrary<ReadonlyArray<Op>> = fc.array(
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({
        kind: fc.constant("turn" as const),
        user: word,
        calls: fc.array(fc.array(block, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 }),
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant("compact" as const), auto: fc.boolean(), summary: word }) },
    {
      weight: 1,
      arbitrary: fc.record({
        kind: fc.constant("noise" as const),
        type: fc.constantFrom("file-history-snapshot", "summary", "x-future-line"),
      }),
    },
  ),
  { minLength: 1, maxLength: 12 },
)

/** One window entry, as both the reference and the import's window are compared. */
export type Entry = string

export interface Generated {
  readonly text: string
  /** What the window held at the end of each segment: before the first compaction, then after each one. */
  readonly segments: ReadonlyArray<ReadonlyArray<Entry>>
}

const SESSION = "9a0e3c52-0000-4000-8000-000000000001"

/** Writes the model as Claude Code's JSONL and answers the reference windows. */
export const generate = (ops: ReadonlyArray<Op>): Generated => {
  const lines: Array<string> = []
  const segments: Array<Array<Entry>> = [[]]
  let n = 0
  let last: string | null = null
  const ts = () => new Date(Date.UTC(2025, 8, 30, 10, 0, 0) + n * 1000).toISOString()
  const emit = (line: Record<string, unknown>) => {
    n++
    lines.push(JSON.stringify(line))
  }
  const entry = (type: string, uuid: string, extra: Record<string, unknown>) => {
    emit({
      parentUuid: last,
      isSidechain: false,
      sessionId: SESSION,
      version: "1.0.98",
      type,
      uuid,
      timestamp: ts(),
      ...extra,
    })
    last = uuid
  }
  let call = 0
  for (const op of ops) {
    const current = segments[segments.length - 1]!
    if (op.kind === "noise") {
      if (op.type === "summary") emit({ type: "summary", summary: "a title", leafUuid: last })
      else emit({ type: op.type, messageId: last, snapshot: {} })
      continue
    }
    if (op.kind === "compact") {
      entry("system", `b${n}`, {
        subtype: "compact_boundary",
        content: "Conversation compacted",
        compactMetadata: { trigger: op.auto ? "auto" : "manual", preTokens: 1000 },
      })
      entry("user", `s${n}`, { message: { role: "user", content: op.summary }, isCompactSummary: true })
      segments.push([`summary:${op.summary}`])
      continue
    }
    entry("user", `u${n}`, { message: { role: "user", content: [{ type: "text", text: op.user }] } })
    current.push(`user:${op.user}`)
    for (const blocks of op.calls) {
      call++
      const id = `msg_${call}`
      const tools: Array<{ id: string; block: Block & { type: "tool" } }> = []
      const seen: Array<string> = []
      blocks.forEach((b, i) => {
        const content =
          b.type === "text"
            ? { type: "text", text: b.text }
            : b.type === "thinking"
              ? { type: "thinking", thinking: b.text, signature: "s" }
              : { type: "tool_use", id: `toolu_${call}_${i}`, name: b.name, input: { i } }
        if (b.type === "tool") tools.push({ id: `toolu_${call}_${i}`, block: b })
        const usage = {
          input_tokens: 3,
          cache_creation_input_tokens: 10 * call,
          cache_read_input_tokens: 100 * call,
          output_tokens: i + 1,
        }
        entry("assistant", `a${n}`, {
          requestId: `req_${call}`,
          message: {
            id,
            type: "message",
            role: "assistant",
            model: "claude-sonnet-4-5",
            content: [content],
            stop_reason: null,
            usage,
          },
        })
        seen.push(
          b.type === "text"
            ? `text:${b.text}`
            : b.type === "thinking"
              ? `reasoning:${b.text}`
              : `tool:${b.name}:toolu_${call}_${i}`,
        )
      })
      if (tools.length > 0)
        entry("user", `r${n}`, {
          message: {
            role: "user",
            content: tools.map((t) => ({
              type: "tool_result",
              tool_use_id: t.id,
              content: t.block.output,
              is_error: t.block.error,
            })),
          },
        })
      // The reference: the call's blocks in order, each tool call with the result Claude Code sent back.
      current.push(
        `assistant:${seen
          .map((s) => {
            const tool = tools.find((t) => s.endsWith(`:${t.id}`))
            return tool === undefined ? s : `${s}:${tool.block.error ? "error" : "completed"}:${tool.block.output}`
          })
          .join("|")}`,
      )
    }
  }
  return { text: lines.map((l) => `${l}\n`).join(""), segments }
}
