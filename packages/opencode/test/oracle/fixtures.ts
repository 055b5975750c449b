/**
 * Captured scenarios as fixtures under `test/fixtures/oracle/`: `<scenario>.export.json.gz` is what `opencode export`
 * printed, `<scenario>.requests.json.gz` every request OpenCode sent. Request messages repeat from call to call (the
 * whole history is sent each time), so each distinct message is stored once, by hash, and requests list hashes;
 * the system prompt and the tool definitions, which the comparison leaves aside, are kept as a hash, a length and
 * the tool names. Both files are gzipped: the scenarios' large tool outputs are numbered lines that compress well.
 */
import { createHash } from "node:crypto"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { gunzipSync, gzipSync } from "node:zlib"
import type { Capture } from "./capture.ts"
import type { ChatMessage, Reply } from "./model-server.ts"
import type { Kind } from "./scenarios.ts"

/** The fixtures folder. */
export const fixturesDir = join(import.meta.dirname, "../fixtures/oracle")

/** One stored request. */
export interface StoredRequest {
  readonly index: number
  readonly kind: Kind
  readonly maxTokens: number | undefined
  /** sha256 (first 16 hex digits) and length of each system message. */
  readonly system: ReadonlyArray<{ readonly sha256: string; readonly chars: number }>
  readonly tools: ReadonlyArray<string>
  /** Hashes into `messages`, in order, system messages left out. */
  readonly messages: ReadonlyArray<string>
  readonly reply: Reply
}

/** The requests file of a scenario. */
export interface StoredRequests {
  readonly scenario: string
  readonly opencodeVersion: string
  readonly capturedAt: string
  readonly repo: string
  readonly sessionId: string
  readonly messages: Readonly<Record<string, ChatMessage>>
  readonly requests: ReadonlyArray<StoredRequest>
}

const hash = (text: string) => createHash("sha256").update(text).digest("hex").slice(0, 16)

/** The requests file's content for a capture. */
export const storeRequests = (capture: Capture, capturedAt: string): StoredRequests => {
  const messages: Record<string, ChatMessage> = {}
  const requests = capture.requests.map((r): StoredRequest => {
    const refs: Array<string> = []
    const system: Array<{ sha256: string; chars: number }> = []
    for (const m of r.body.messages) {
      const text = JSON.stringify(m)
      if (m.role === "system") {
        const content = typeof m.content === "string" ? m.content : text
        system.push({ sha256: hash(content), chars: content.length })
        continue
      }
      const key = hash(text)
      messages[key] = m
      refs.push(key)
    }
    return {
      index: r.index,
      kind: r.kind,
      maxTokens: typeof r.body.max_tokens === "number" ? r.body.max_tokens : undefined,
      system,
      tools: (r.body.tools ?? []).map((t) => t.function.name),
      messages: refs,
      reply: r.reply,
    }
  })
  return {
    scenario: capture.scenario,
    opencodeVersion: capture.opencodeVersion,
    capturedAt,
    repo: capture.repo,
    sessionId: capture.sessionId,
    messages,
    requests,
  }
}

/** Writes both files of a capture. */
export const writeCapture = (capture: Capture, capturedAt: string, dir: string = fixturesDir): void => {
  const requests = `${JSON.stringify(storeRequests(capture, capturedAt), null, 1)}\n`
  writeFileSync(join(dir, `${capture.scenario}.requests.json.gz`), gzipSync(requests, { level: 9 }))
  writeFileSync(join(dir, `${capture.scenario}.export.json.gz`), gzipSync(capture.exportText, { level: 9 }))
}

/** A loaded scenario fixture: the export text and the requests with their messages resolved. */
export interface Loaded {
  readonly stored: StoredRequests
  readonly exportText: string
  readonly requests: ReadonlyArray<StoredRequest & { readonly chat: ReadonlyArray<ChatMessage> }>
}

/** Reads a scenario's fixtures. */
export const load = (scenario: string, dir: string = fixturesDir): Loaded => {
  const text = (name: string) => gunzipSync(readFileSync(join(dir, name))).toString("utf8")
  const stored = JSON.parse(text(`${scenario}.requests.json.gz`)) as StoredRequests
  const exportText = text(`${scenario}.export.json.gz`)
  const requests = stored.requests.map((r) => ({
    ...r,
    chat: r.messages.map((key) => {
      const m = stored.messages[key]
      if (m === undefined) throw new Error(`${scenario}: request ${r.index} names a missing message ${key}`)
      return m
    }),
  }))
  return { stored, exportText, requests }
}
