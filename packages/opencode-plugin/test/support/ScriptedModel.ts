// A scripted OpenAI-compatible chat-completions server on loopback, for driving the real OpenCode: every request body is
// kept, and each answer (text or tool calls, with usage) is streamed back as server-sent events, as a provider would.
import * as Fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

/** One chat-completions message as OpenCode sends it. */
export interface ChatMessage {
  readonly role: "system" | "user" | "assistant" | "tool"
  readonly content?: string | null | ReadonlyArray<{ readonly type: string; readonly text?: string }>
  readonly tool_calls?: ReadonlyArray<{
    readonly id: string
    readonly function: { readonly name: string; readonly arguments: string }
  }>
  readonly tool_call_id?: string
}

/** A request OpenCode sent. */
export interface Captured {
  readonly body: {
    readonly messages: ReadonlyArray<ChatMessage>
    readonly tools?: ReadonlyArray<{ readonly function: { readonly name: string } }>
  }
  /** `summary`: OpenCode's summariser (the history serialised in `<conversation>`); `agent`: a call with tools. */
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
export const textOf = (message: ChatMessage): string =>
  typeof message.content === "string"
    ? message.content
    : Array.isArray(message.content)
      ? message.content.map((p) => p.text ?? "").join("")
      : ""

const kindOf = (body: Captured["body"]): Captured["kind"] => {
  if (body.messages.some((m) => m.role === "user" && textOf(m).includes("<conversation>"))) return "summary"
  return (body.tools?.length ?? 0) > 0 ? "agent" : "other"
}

/** A running scripted model. */
export interface ScriptedModel {
  readonly port: number
  readonly requests: Array<Captured>
  /** Called for each request before it is answered (e.g. to kill OpenCode mid-call). */
  onRequest: ((request: Captured) => void) | undefined
  readonly close: () => Promise<void>
}

let calls = 0

/** Starts the server; `script` answers each request; each request is also appended to `dump` when given. */
export const start = async (script: (request: Captured) => Reply, dump?: string): Promise<ScriptedModel> => {
  const requests: Array<Captured> = []
  const model: ScriptedModel = { port: 0, requests, onRequest: undefined, close: async () => {} }
  const server = Http.createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      if (!(req.url ?? "").endsWith("/chat/completions")) {
        res.writeHead(404).end()
        return
      }
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Captured["body"]
      const captured: Captured = { body, kind: kindOf(body) }
      requests.push(captured)
      if (dump !== undefined) Fs.appendFileSync(dump, `${JSON.stringify(captured)}\n`)
      model.onRequest?.(captured)
      let reply: Reply
      try {
        reply = script(captured)
      } catch (error) {
        res.writeHead(500, { "content-type": "application/json" })
        res.end(JSON.stringify({ error: { message: String(error) } }))
        return
      }
      setTimeout(() => answer(res, reply), reply.delayMs ?? 0)
    })
  })
  const answer = (res: Http.ServerResponse, reply: Reply) => {
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
    const id = `chatcmpl-${++calls}`
    const send = (choice: unknown, usage?: unknown) =>
      res.write(
        `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 1, model: "scripted", choices: [choice], ...(usage === undefined ? {} : { usage }) })}\n\n`,
      )
    if (reply.text !== undefined)
      send({ index: 0, delta: { role: "assistant", content: reply.text }, finish_reason: null })
    for (const [index, call] of (reply.toolCalls ?? []).entries())
      send({
        index: 0,
        delta: {
          role: "assistant",
          tool_calls: [
            {
              index,
              id: `call_${calls}_${index}`,
              type: "function",
              function: { name: call.name, arguments: JSON.stringify(call.args) },
            },
          ],
        },
        finish_reason: null,
      })
    const prompt = reply.promptTokens ?? 1_000
    send(
      { index: 0, delta: {}, finish_reason: (reply.toolCalls ?? []).length > 0 ? "tool_calls" : "stop" },
      { prompt_tokens: prompt, completion_tokens: 10, total_tokens: prompt + 10 },
    )
    res.end("data: [DONE]\n\n")
  }
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return Object.assign(model, {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  })
}
