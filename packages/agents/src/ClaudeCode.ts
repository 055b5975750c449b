/**
 * A Claude Code session transcript (`~/.claude/projects/<project>/<session>.jsonl`) → pivot's events, as one pure
 * function of the text: no IO, no clock, never fatal on a line it cannot read.
 *
 * Claude Code writes one JSON object per line: `user` and `assistant` entries (`uuid`, `parentUuid`, `sessionId`,
 * `timestamp`, `isSidechain`, and the Anthropic API's `message` with its `content` blocks and `usage`), `system`
 * entries (`subtype: "compact_boundary"` with `compactMetadata.trigger` when it compacted), the summary it wrote as
 * a user entry marked `isCompactSummary`, and bookkeeping lines (`summary`, `file-history-snapshot`, …). One API
 * response is written as several `assistant` lines, one per content block, sharing `message.id`; they become one
 * step. Tool results arrive in the next `user` entry as `tool_result` blocks.
 */
import type { Ids, Message, Model } from "@pivot/core"
import { Builder, isRecord, lineId, millis, opt } from "./internal/Builder.ts"
import { type ImportResult, type Options, type Reader, splitLines } from "./Transcript.ts"
import * as Usage from "./Usage.ts"

type Json = Readonly<Record<string, unknown>>

interface Pending {
  readonly key: string
  /** The step's message id, from its first line. */
  readonly id: Ids.MessageId
  readonly lines: Array<{ readonly number: number; readonly line: Json }>
}

const msgId = (line: number, suffix: string) => lineId("msg", line, suffix) as Ids.MessageId
const prtId = (line: number, suffix: string) => lineId("prt", line, suffix) as Ids.PartId

/** Claude Code's stop reasons in pivot's (OpenCode's) finish words; a call cut short of one is judged by its parts. */
const finishOf = (stop: unknown, hasTools: boolean): string => {
  switch (stop) {
    case "end_turn":
    case "stop_sequence":
      return "stop"
    case "tool_use":
      return "tool-calls"
    case "max_tokens":
      return "length"
    default:
      return typeof stop === "string" ? stop : hasTools ? "tool-calls" : "stop"
  }
}

/** A tool result's content as the text the model read (images as a placeholder). */
const resultText = (content: unknown): string => {
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return content === undefined || content === null ? "" : JSON.stringify(content)
  return content
    .map((block) => {
      if (!isRecord(block)) return ""
      if (block.type === "text" && typeof block.text === "string") return block.text
      if (block.type === "image") return "[image]"
      return JSON.stringify(block)
    })
    .join("\n")
}

const mediaOf = (block: Json): { mime: string; url: string } | undefined => {
  const source = isRecord(block.source) ? block.source : undefined
  if (source === undefined) return undefined
  const mime = typeof source.media_type === "string" ? source.media_type : "application/octet-stream"
  if (source.type === "base64" && typeof source.data === "string")
    return { mime, url: `data:${mime};base64,${source.data}` }
  if (source.type === "url" && typeof source.url === "string") return { mime, url: source.url }
  return undefined
}

const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content
          .flatMap((b) => (isRecord(b) && b.type === "text" && typeof b.text === "string" ? [b.text] : []))
          .join("\n\n")
      : ""

/**
 * Line kinds Claude Code writes that pivot leaves out: bookkeeping that holds nothing the model was sent, and (since
 * 2.1.x) the records of what it sent besides the conversation: `attachment` lines (environment, date, file and
 * listing reminders rendered into the next request as `<system-reminder>` text), the request records
 * `api-request` / `api-request-shape` / `api-request-blob`, and `atis-latch`, `last-prompt`, `tools-used`,
 * `cost-state`, `mode`.
 */
const BOOKKEEPING = new Set([
  "summary",
  "file-history-snapshot",
  "queue-operation",
  "custom-title",
  "tag",
  "progress",
  "attachment",
  "api-request",
  "api-request-shape",
  "api-request-blob",
  "atis-latch",
  "last-prompt",
  "tools-used",
  "cost-state",
  "mode",
])

/** The uuids a compact_boundary says the compaction kept verbatim after the summary (Claude Code 2.1.x). */
const preservedOf = (meta: Json): ReadonlyArray<string> => {
  const kept = isRecord(meta.preservedMessages) ? meta.preservedMessages.uuids : undefined
  return Array.isArray(kept) ? kept.filter((u): u is string => typeof u === "string") : []
}

/**
 * Imports the text of a Claude Code session transcript. Every complete line is read; a last line without its
 * newline waits. Lines pivot does not know are counted in `report.unknown`, corrupt lines in `report.malformed`.
 *
 * **Example**
 * ```ts
 * const { sessionId, events, report } = ClaudeCode.importText(readFileSync(file, "utf8"), { final: true })
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
  const b = new Builder("claude-code")
  let pending: Pending | undefined
  let marker:
    | { readonly id: Ids.MessageId; readonly line: number; readonly preserved: ReadonlyArray<string> }
    | undefined
  /** The message each line's uuid was imported into (a step's lines all map to the step). */
  const imported = new Map<string, Ids.MessageId>()
  let model: Model.ModelRef | undefined
  const uuids = new Set<string>()
  let lastUuid: string | undefined

  const flush = () => {
    if (pending === undefined) return
    const group = pending
    pending = undefined
    const first = group.lines[0]!
    const last = group.lines[group.lines.length - 1]!
    const message = isRecord(last.line.message) ? last.line.message : {}
    const where = `line ${first.number}`
    const parts: Array<Message.AssistantPart> = []
    for (const { number, line } of group.lines) {
      const content = isRecord(line.message) ? line.message.content : undefined
      const blocks = Array.isArray(content)
        ? content
        : typeof content === "string"
          ? [{ type: "text", text: content }]
          : []
      const at = millis(line.timestamp, 0)
      for (const [index, block] of blocks.entries()) {
        const id = prtId(number, index.toString(16))
        if (!isRecord(block)) {
          b.count("unknown", "assistant block")
          continue
        }
        switch (block.type) {
          case "text":
            if (typeof block.text === "string") parts.push({ type: "text", id, text: block.text })
            continue
          case "thinking":
            if (typeof block.thinking === "string") parts.push({ type: "reasoning", id, text: block.thinking })
            continue
          case "redacted_thinking": {
            b.count("dropped", "redacted_thinking")
            continue
          }
          case "tool_use":
            parts.push({
              type: "tool",
              id,
              callId: typeof block.id === "string" ? block.id : `${number}:${index}`,
              tool: typeof block.name === "string" ? block.name : "unknown",
              state: { status: "running", input: isRecord(block.input) ? block.input : {}, startedAt: at },
            })
            continue
          default: {
            b.count("unknown", `assistant block ${String(block.type)}`)
            continue
          }
        }
      }
    }
    model = { providerId: "anthropic", modelId: typeof message.model === "string" ? message.model : "unknown" }
    const createdAt = millis(first.line.timestamp, 0)
    const completedAt = millis(last.line.timestamp, createdAt)
    const apiError = last.line.isApiErrorMessage === true
    const hasTools = parts.some((p) => p.type === "tool")
    b.step(
      {
        role: "assistant",
        id: group.id,
        parentId: b.parentOf(where),
        createdAt,
        completedAt,
        model,
        tokens: Usage.anthropic(message.usage),
        finish: apiError ? "error" : finishOf(message.stop_reason, hasTools),
        ...opt("error", apiError ? { name: "APIError", message: textOf(message.content) || "API error" } : undefined),
        parts,
      },
      completedAt,
    )
  }

  const feed = (lines: ReadonlyArray<{ readonly number: number; readonly text: string }>) => {
    for (const { number, text: raw } of lines) {
      const line = b.parse(number, raw)
      if (line === undefined) continue
      const type = typeof line.type === "string" ? line.type : "(no type)"
      const at = millis(line.timestamp, 0)
      const uuid = typeof line.uuid === "string" ? line.uuid : undefined
      // A subagent's lines (`isSidechain`, in the session's file or a file of their own) are not the session's window.
      if (line.isSidechain === true) {
        b.count("dropped", "sidechain")
        continue
      }
      if (
        !b.started &&
        typeof line.sessionId === "string" &&
        (type === "user" || type === "assistant" || type === "system")
      )
        b.start(line.sessionId, at)
      if ((type === "user" || type === "assistant" || type === "system") && !b.started) b.start("unknown", at)
      // A rewind ("edit a message and resend"): the line continues from an earlier message, not the last one.
      const parent = typeof line.parentUuid === "string" ? line.parentUuid : undefined
      if (
        parent !== undefined &&
        uuid !== undefined &&
        lastUuid !== undefined &&
        parent !== lastUuid &&
        uuids.has(parent) &&
        type === "user"
      )
        b.warnings.push(
          `line ${number}: continues from ${parent}, not from the line before it (a rewind); pivot imports in file order, so the abandoned branch stays in the window`,
        )
      if (uuid !== undefined && (type === "user" || type === "assistant" || type === "system")) {
        uuids.add(uuid)
        lastUuid = uuid
      }

      switch (type) {
        case "assistant": {
          const message = isRecord(line.message) ? line.message : {}
          const key = typeof message.id === "string" ? message.id : (uuid ?? String(number))
          if (pending !== undefined && pending.key !== key) flush()
          pending ??= { key, id: msgId(number, typeof message.id === "string" ? message.id : (uuid ?? "")), lines: [] }
          pending.lines.push({ number, line })
          if (uuid !== undefined) imported.set(uuid, pending.id)
          break
        }
        case "user": {
          flush()
          const message = isRecord(line.message) ? line.message : {}
          const id = msgId(number, uuid ?? "")
          if (line.isCompactSummary === true) {
            const summaryText = textOf(message.content)
            if (marker === undefined) {
              b.warnings.push(
                `line ${number}: a compact summary without a compact_boundary before it; its marker is this line`,
              )
              b.compactionRequested(msgId(number, "marker"), prtId(number, "marker"), at, true)
              marker = { id: msgId(number, "marker"), line: number, preserved: [] }
            }
            b.compactionFinished({
              markerId: marker.id,
              summaryId: id,
              partId: prtId(number, "0"),
              at,
              text: summaryText,
              model: model ?? { providerId: "anthropic", modelId: "unknown" },
              keep: new Set(marker.preserved.flatMap((u) => imported.get(u) ?? [])),
            })
            marker = undefined
            break
          }
          const content = message.content
          const blocks: ReadonlyArray<unknown> = Array.isArray(content)
            ? content
            : typeof content === "string"
              ? [{ type: "text", text: content }]
              : []
          const parts: Array<Message.UserPart> = []
          for (const [index, block] of blocks.entries()) {
            const partId = prtId(number, index.toString(16))
            if (!isRecord(block)) {
              b.count("unknown", "user block")
              continue
            }
            switch (block.type) {
              case "text":
                if (typeof block.text === "string")
                  parts.push({
                    type: "text",
                    id: partId,
                    text: block.text,
                    ...opt("synthetic", line.isMeta === true ? true : undefined),
                  })
                continue
              case "image":
              case "document": {
                const media = mediaOf(block)
                if (media === undefined) {
                  b.count("unknown", `user ${block.type} source`)
                  continue
                }
                parts.push({ type: "file", id: partId, mime: media.mime, url: media.url })
                continue
              }
              case "tool_result": {
                const callId = typeof block.tool_use_id === "string" ? block.tool_use_id : ""
                const output = resultText(block.content)
                const known = b.toolResult(callId, at, block.is_error === true ? { error: output } : { output })
                if (!known) {
                  b.count("dropped", "tool_result without its call")
                  b.warnings.push(`line ${number}: a tool_result for ${callId}, a call no imported step made; left out`)
                }
                continue
              }
              default: {
                b.count("unknown", `user block ${String(block.type)}`)
                continue
              }
            }
          }
          if (parts.length > 0) {
            b.user({ role: "user", id, createdAt: at, parts })
            if (uuid !== undefined) imported.set(uuid, id)
          }
          break
        }
        case "system": {
          if (line.subtype === "compact_boundary") {
            flush()
            const meta = isRecord(line.compactMetadata) ? line.compactMetadata : {}
            if (marker !== undefined)
              b.warnings.push(
                `line ${number}: a compact_boundary while the one at line ${marker.line} has no summary yet`,
              )
            marker = { id: msgId(number, uuid ?? "boundary"), line: number, preserved: preservedOf(meta) }
            b.compactionRequested(marker.id, prtId(number, "marker"), at, meta.trigger !== "manual")
          } else b.count("dropped", `system ${String(line.subtype ?? "")}`.trim())
          break
        }
        default:
          if (BOOKKEEPING.has(type)) b.count("dropped", type)
          else b.count("unknown", type)
      }
    }
  }
  return { feed, finish: flush, result: (split) => b.result(split), events: () => b.events }
}
