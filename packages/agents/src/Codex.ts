/**
 * A Codex CLI rollout (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`) → pivot's events, as one pure function of the
 * text: no IO, no clock, never fatal on a line it cannot read.
 *
 * Every line is `{ timestamp, type, payload }`. `session_meta` opens the session; `turn_context` names the model of
 * the turn; `response_item` holds what went to and came from the model (the Responses API's items: `message` with a
 * role, `reasoning`, `function_call` / `custom_tool_call` / `local_shell_call` and their outputs); `event_msg` holds
 * what the UI showed, of which pivot reads `token_count` (the usage of the call that just finished: `last_token_usage`
 * with `cached_input_tokens`); `compacted` holds the summary Codex wrote when it compacted, with the
 * `replacement_history` it continued from where the rollout records it.
 */
import type { Ids, Message, Model } from "@pivot/core"
import { Builder, isRecord, lineId, millis, opt } from "./internal/Builder.ts"
import { type ImportResult, type Options, type Reader, splitLines } from "./Transcript.ts"
import * as Usage from "./Usage.ts"

type Json = Readonly<Record<string, unknown>>

const msgId = (line: number, suffix: string) => lineId("msg", line, suffix) as Ids.MessageId
const prtId = (line: number, suffix: string) => lineId("prt", line, suffix) as Ids.PartId

const contentText = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content.flatMap((c) => (isRecord(c) && typeof c.text === "string" ? [c.text] : [])).join("\n")
      : ""

/** A tool output as the text the model read: a string, content items, or `{ content, success }`. */
const outputText = (output: unknown): { readonly text: string; readonly failed: boolean } => {
  if (typeof output === "string") return { text: output, failed: false }
  if (Array.isArray(output)) return { text: contentText(output), failed: false }
  if (isRecord(output))
    return {
      text: typeof output.content === "string" ? output.content : JSON.stringify(output),
      failed: output.success === false,
    }
  return { text: "", failed: false }
}

const argumentsOf = (args: unknown): Readonly<Record<string, unknown>> => {
  if (isRecord(args)) return args
  if (typeof args !== "string") return {}
  try {
    const parsed: unknown = JSON.parse(args)
    return isRecord(parsed) ? parsed : { arguments: args }
  } catch {
    return { arguments: args }
  }
}

interface Step {
  readonly line: number
  readonly at: number
  last: number
  readonly parts: Array<Message.AssistantPart>
}

/** Lines that hold nothing of the conversation: they do not end a held call (see `held`). */
const QUIET = new Set(["event_msg", "token_usage_record", "world_state", "turn_context"])

const textOfParts = (parts: ReadonlyArray<Message.AssistantPart>): string =>
  parts.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("\n")

/**
 * Whether a held text-only call is the summary call of the `compacted` line that follows it: by response id where
 * both lines carry one (`token_usage_record.response_id`, `compacted.compaction_response_id`, Codex 0.17x); otherwise
 * by text, `message` being the call's text or ending with it on a line of its own (Codex puts a handoff preamble first).
 */
const isSummaryCall = (
  held: { readonly step: Step; readonly responseId: string | undefined },
  compacted: Readonly<Record<string, unknown>>,
): boolean => {
  if (typeof compacted.compaction_response_id === "string" && held.responseId !== undefined)
    return compacted.compaction_response_id === held.responseId
  const message = compacted.message
  const text = textOfParts(held.step.parts)
  return typeof message === "string" && text !== "" && (message === text || message.endsWith(`\n${text}`))
}

const CALLS = new Set(["function_call", "custom_tool_call", "local_shell_call"])
const OUTPUTS = new Set(["function_call_output", "custom_tool_call_output", "local_shell_call_output"])

/**
 * Imports the text of a Codex CLI rollout. Every complete line is read; a last line without its newline waits. A
 * model call is recorded when its `token_count` arrives (repeated counts with unchanged totals are one), or, when the
 * rollout records none, at the next user message (and at the end of a complete transcript) with no usage.
 *
 * **Example**
 * ```ts
 * const { sessionId, events, report } = Codex.importText(readFileSync(file, "utf8"), { final: true })
 * ```
 */
export const importText = (text: string, options: Options): ImportResult => {
  const split = splitLines(text)
  const reader = read()
  reader.feed(split.lines)
  if (options.final) reader.finish()
  return reader.result({ lines: split.lines.length, consumed: split.consumed, waiting: split.waiting })
}

/**
 * The reader behind `importText`, fed line by line: what `--follow` keeps between reads, so that appended lines are
 * read without reading the file again. Fed the same lines, it answers the same events as `importText`.
 */
export const read = (): Reader => {
  const b = new Builder("codex")
  let provider = "openai"
  let model: Model.ModelRef | undefined
  let step: Step | undefined
  /** The held call a `compacted` line showed to be its summary call: its usage is the summary's. */
  let summaryCall: { readonly tokens: Message.AssistantMessage["tokens"] } | undefined
  let lastTotals: string | undefined
  const users: Array<{ readonly id: Ids.MessageId; readonly text: string }> = []

  const modelRef = (): Model.ModelRef => model ?? { providerId: provider, modelId: "unknown" }
  /**
   * A call that answered only text, whose usage came: held until the next line that is not bookkeeping, since Codex
   * writes its compaction's summary call exactly so (the summary as an assistant message and its token_count) just
   * before the `compacted` line that holds the same text (see `isSummaryCall`).
   */
  let held:
    | {
        readonly step: Step
        readonly tokens: Message.AssistantMessage["tokens"]
        readonly at: number
        readonly responseId: string | undefined
      }
    | undefined
  /** The response id of the last `token_usage_record` (Codex 0.17x writes one per response, before its token_count). */
  let responseId: string | undefined
  const record = (s: Step, tokens: Message.AssistantMessage["tokens"], at: number) =>
    b.step(
      {
        role: "assistant",
        id: msgId(s.line, "step"),
        parentId: b.parentOf(`line ${s.line}`),
        createdAt: s.at,
        completedAt: at,
        model: modelRef(),
        tokens,
        finish: s.parts.some((p) => p.type === "tool") ? "tool-calls" : "stop",
        parts: s.parts,
      },
      at,
    )
  const release = () => {
    if (held === undefined) return
    const h = held
    held = undefined
    record(h.step, h.tokens, h.at)
  }
  const flush = (tokens: Message.AssistantMessage["tokens"], at: number) => {
    if (step === undefined) return
    const s = step
    step = undefined
    if (s.parts.every((p) => p.type === "text")) held = { step: s, tokens, at, responseId }
    else record(s, tokens, at)
  }
  const zero = { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 }

  const feed = (lines: ReadonlyArray<{ readonly number: number; readonly text: string }>) => {
    for (const { number, text: raw } of lines) {
      const line = b.parse(number, raw)
      if (line === undefined) continue
      const type = typeof line.type === "string" ? line.type : "(no type)"
      const at = millis(line.timestamp, 0)
      const payload: Json = isRecord(line.payload) ? line.payload : {}
      if (type === "session_meta") {
        if (typeof payload.model_provider === "string") provider = payload.model_provider
        if (!b.started) b.start(typeof payload.id === "string" ? payload.id : "rollout", millis(payload.timestamp, at))
        else b.count("dropped", "session_meta (again)")
        continue
      }
      if (!QUIET.has(type)) {
        if (held !== undefined && type === "compacted" && isSummaryCall(held, payload)) {
          summaryCall = held
          held = undefined
          b.count("dropped", "compaction summary call")
        } else release()
      } else if (type === "event_msg" && payload.type === "task_complete") release() // the turn is over: no summary call comes
      if (type === "token_usage_record" && typeof payload.response_id === "string") responseId = payload.response_id
      if (!b.started) {
        b.warnings.push(`line ${number}: the rollout does not start with session_meta; the session is named "rollout"`)
        b.start("rollout", at)
      }
      switch (type) {
        case "turn_context":
          if (typeof payload.model === "string") model = { providerId: provider, modelId: payload.model }
          break
        case "response_item": {
          const kind = typeof payload.type === "string" ? payload.type : "(no type)"
          if (kind === "message") {
            const role = payload.role
            const textOf = contentText(payload.content)
            if (role === "assistant") {
              step ??= { line: number, at, last: at, parts: [] }
              step.parts.push({ type: "text", id: prtId(number, "t"), text: textOf })
              step.last = at
            } else {
              flush(zero, step?.last ?? at)
              const id = msgId(number, "u")
              const parts: Array<Message.UserPart> = [
                {
                  type: "text",
                  id: prtId(number, "t"),
                  text: textOf,
                  // Instructions Codex sends as developer (or system) messages: recorded as synthetic user text.
                  ...opt("synthetic", role === "user" ? undefined : true),
                },
              ]
              if (Array.isArray(payload.content))
                payload.content.forEach((c: unknown, i: number) => {
                  if (isRecord(c) && c.type === "input_image" && typeof c.image_url === "string")
                    parts.push({ type: "file", id: prtId(number, `i${i}`), mime: "image/*", url: c.image_url })
                })
              b.user({ role: "user", id, createdAt: at, parts })
              if (role === "user") users.push({ id, text: textOf })
            }
          } else if (kind === "reasoning") {
            const summary = Array.isArray(payload.summary) ? contentText(payload.summary) : ""
            const content = contentText(payload.content)
            const text = summary !== "" ? summary : content
            step ??= { line: number, at, last: at, parts: [] }
            step.last = at
            if (text === "") b.count("dropped", "reasoning (encrypted only)")
            else step.parts.push({ type: "reasoning", id: prtId(number, "r"), text })
          } else if (CALLS.has(kind)) {
            step ??= { line: number, at, last: at, parts: [] }
            step.last = at
            const callId =
              typeof payload.call_id === "string"
                ? payload.call_id
                : typeof payload.id === "string"
                  ? payload.id
                  : `${number}`
            const input =
              kind === "function_call"
                ? argumentsOf(payload.arguments)
                : kind === "custom_tool_call"
                  ? { input: payload.input }
                  : isRecord(payload.action)
                    ? payload.action
                    : {}
            const tool =
              typeof payload.name === "string" ? payload.name : kind === "local_shell_call" ? "local_shell" : kind
            step.parts.push({
              type: "tool",
              id: prtId(number, "c"),
              callId,
              tool,
              state: { status: "running", input, startedAt: at },
            })
          } else if (OUTPUTS.has(kind)) {
            const callId = typeof payload.call_id === "string" ? payload.call_id : ""
            const { text: output, failed } = outputText(payload.output)
            const inStep = step?.parts.findIndex((p) => p.type === "tool" && p.callId === callId) ?? -1
            if (step !== undefined && inStep !== -1) {
              // The rollout recorded no usage between the call and its output: the result joins the open step.
              const part = step.parts[inStep] as Message.ToolPart
              const started = part.state.status === "running" ? part.state.startedAt : undefined
              step.parts[inStep] = {
                ...part,
                state: failed
                  ? {
                      status: "error",
                      input: part.state.input,
                      error: output,
                      ...opt("startedAt", started),
                      endedAt: at,
                    }
                  : { status: "completed", input: part.state.input, output, ...opt("startedAt", started), endedAt: at },
              }
            } else if (!b.toolResult(callId, at, failed ? { error: output } : { output })) {
              b.count("dropped", `${kind} without its call`)
              b.warnings.push(`line ${number}: an output for ${callId}, a call no imported step made; left out`)
            }
          } else if (kind === "web_search_call") b.count("dropped", "web_search_call")
          else b.count("unknown", `response_item ${kind}`)
          break
        }
        case "event_msg": {
          const kind = typeof payload.type === "string" ? payload.type : "(no type)"
          if (kind !== "token_count") {
            b.count("dropped", `event_msg ${kind}`)
            break
          }
          const info = isRecord(payload.info) ? payload.info : undefined
          if (info === undefined) break
          // Codex repeats a count when nothing was called in between: unchanged totals are the same call.
          const totals = JSON.stringify(info.total_token_usage ?? null)
          if (totals === lastTotals) break
          lastTotals = totals
          if (step === undefined) {
            b.count("dropped", "token_count without a step")
            break
          }
          flush(Usage.openai(info.last_token_usage), at)
          break
        }
        case "compacted": {
          flush(zero, step?.last ?? at)
          const markerId = msgId(number, "marker")
          b.warnings.push(`line ${number}: Codex does not record what triggered a compaction; recorded as automatic`)
          b.compactionRequested(markerId, prtId(number, "marker"), at, true)
          const history = Array.isArray(payload.replacement_history) ? payload.replacement_history : undefined
          const keptTexts = new Set(
            (history ?? []).flatMap((item: unknown) =>
              isRecord(item) && item.type === "message" && item.role === "user" ? [contentText(item.content)] : [],
            ),
          )
          b.compactionFinished({
            markerId,
            summaryId: msgId(number, "summary"),
            partId: prtId(number, "s"),
            at,
            text: typeof payload.message === "string" ? payload.message : "",
            model: modelRef(),
            ...opt("tokens", summaryCall?.tokens),
            keep: new Set(users.filter((u) => keptTexts.has(u.text)).map((u) => u.id)),
          })
          summaryCall = undefined
          break
        }
        case "world_state":
        case "token_usage_record":
          // Codex 0.17x: the environment it described to the model, and each response's usage again (read from
          // token_count, as older rollouts have only that).
          b.count("dropped", type)
          break
        default:
          b.count("unknown", type)
      }
    }
  }
  const finish = () => {
    flush(zero, step?.last ?? 0)
    release()
  }
  return { feed, finish, result: (split) => b.result(split), events: () => b.events }
}
