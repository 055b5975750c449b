// The scripted model the plugin's real-OpenCode tests drive OpenCode with: the oracle's loopback chat-completions
// server (packages/opencode/test/oracle/model-server.ts, the one scripted model of every test that runs the binary),
// seen through what these tests need: each request kept with its kind, a hook called before it is answered (to kill
// OpenCode mid-call), and answers written as text or tool calls with the prompt tokens to report.
import * as Fs from "node:fs"
import {
  answer,
  type ChatMessage,
  type ChatRequest,
  contentText,
  start as startServer,
} from "../../../opencode/test/oracle/model-server.ts"
import { kindOf } from "../../../opencode/test/oracle/scenarios.ts"

export type { ChatMessage } from "../../../opencode/test/oracle/model-server.ts"

/** A request OpenCode sent. */
export interface Captured {
  readonly body: ChatRequest
  /**
   * `summary`: OpenCode's summariser (no tools offered); `agent`: a call with tools; `other`: OpenCode's title call.
   * The oracle's `kindOf` decides.
   */
  readonly kind: "agent" | "summary" | "other"
}

/** What the scripted model answers. */
export interface Reply {
  readonly text?: string
  readonly toolCalls?: ReadonlyArray<{ readonly name: string; readonly args: unknown }>
  /** Prompt tokens reported; default 1,000. */
  readonly promptTokens?: number
  /** Milliseconds to wait before answering (a slow provider: the step stays running meanwhile); default 0. */
  readonly delayMs?: number
}

/** The text of a message's content. */
export const textOf = (message: ChatMessage): string => contentText(message)

/** The text of the request's last user message ("" when there is none): the prompt of the turn it belongs to. */
export const lastUserText = (request: Captured): string =>
  textOf(request.body.messages.findLast((m) => m.role === "user") ?? { role: "user" })

/** A running scripted model. */
export interface ScriptedModel {
  readonly port: number
  readonly requests: Array<Captured>
  /** Called for each request before it is answered (e.g. to kill OpenCode mid-call). */
  onRequest: ((request: Captured) => void) | undefined
  readonly close: () => Promise<void>
}

/**
 * Starts the server; `script` answers each request (a throw answers HTTP 500); each request is also appended to
 * `dump` when given (one JSON line each).
 */
export const start = async (script: (request: Captured) => Reply, dump?: string): Promise<ScriptedModel> => {
  const requests: Array<Captured> = []
  const model: ScriptedModel = { port: 0, requests, onRequest: undefined, close: async () => {} }
  const server = await startServer((body) => {
    const kind = kindOf(body)
    const captured: Captured = { body, kind: kind === "title" ? "other" : kind }
    requests.push(captured)
    if (dump !== undefined) Fs.appendFileSync(dump, `${JSON.stringify(captured)}\n`)
    model.onRequest?.(captured)
    const reply = script(captured)
    const prompt = reply.promptTokens ?? 1_000
    return answer({
      ...(reply.text === undefined ? {} : { text: reply.text }),
      toolCalls: (reply.toolCalls ?? []).map((call) => ({ name: call.name, arguments: call.args })),
      usage: { prompt_tokens: prompt, completion_tokens: 10 },
      ...(reply.delayMs === undefined ? {} : { delayMs: reply.delayMs }),
    })
  })
  return Object.assign(model, { port: server.port, close: server.close })
}
