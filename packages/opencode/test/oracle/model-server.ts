/**
 * A scripted OpenAI-compatible model on loopback: `POST /v1/chat/completions` answers what a test script says
 * (text, tool calls, usage, or an HTTP error), streamed as server-sent events when the request asks for a stream,
 * and every request body is recorded in arrival order. It lets the real OpenCode binary (or any OpenAI-compatible
 * client) run offline and deterministically, and shows exactly what the client sent.
 *
 * Plain `node:http`, no dependency on pivot: the OpenCode plugin's end-to-end tests can import it as well.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

/** One message of a chat-completions request body, as the client sent it. */
export interface ChatMessage {
  readonly role: "system" | "user" | "assistant" | "tool"
  readonly content?: string | ReadonlyArray<{ readonly type: string; readonly text?: string }> | null
  readonly tool_calls?: ReadonlyArray<{
    readonly id: string
    readonly type: "function"
    readonly function: { readonly name: string; readonly arguments: string }
  }>
  readonly tool_call_id?: string
  readonly [key: string]: unknown
}

/** The chat-completions request body (only the fields the harness reads are typed). */
export interface ChatRequest {
  readonly model: string
  readonly messages: ReadonlyArray<ChatMessage>
  readonly tools?: ReadonlyArray<{ readonly type: "function"; readonly function: { readonly name: string } }>
  readonly stream?: boolean
  readonly [key: string]: unknown
}

/** Token usage reported with a reply (OpenAI's field names). */
export interface Usage {
  readonly prompt_tokens: number
  readonly completion_tokens: number
  readonly total_tokens?: number
}

/** A tool call the scripted model makes; `arguments` is encoded as JSON text on the wire. */
export interface ToolCall {
  readonly id?: string
  readonly name: string
  readonly arguments: unknown
}

/** What the model answers to one request. */
export type Reply =
  | {
      readonly _tag: "answer"
      readonly text?: string
      readonly toolCalls?: ReadonlyArray<ToolCall>
      readonly usage?: Usage
      /** Defaults to `tool_calls` when there are tool calls, `stop` otherwise. */
      readonly finish?: string
      /** Milliseconds to wait before answering (a slow provider: the client's step stays running meanwhile). */
      readonly delayMs?: number
    }
  | { readonly _tag: "error"; readonly status: number; readonly body: unknown }

/** A text answer (optionally with tool calls) and its usage. */
export const answer = (fields: Omit<Extract<Reply, { _tag: "answer" }>, "_tag">): Reply => ({
  _tag: "answer",
  ...fields,
})

/** An HTTP error with a JSON body in OpenAI's error shape. */
export const httpError = (status: number, message: string, code?: string): Reply => ({
  _tag: "error",
  status,
  body: { error: { message, type: "invalid_request_error", code: code ?? null } },
})

/** One recorded request: its order of arrival (0-based), path and parsed body. */
export interface Recorded {
  readonly index: number
  readonly path: string
  readonly body: ChatRequest
  readonly reply: Reply
}

/** Decides the reply to a request; `index` counts every chat request so far (0-based). */
export type Responder = (request: ChatRequest, index: number) => Reply

/** A running scripted model. */
export interface ModelServer {
  readonly port: number
  /** The `baseURL` to configure: `http://127.0.0.1:<port>/v1`. */
  readonly baseURL: string
  /** Every chat request so far, in arrival order. */
  readonly requests: ReadonlyArray<Recorded>
  readonly close: () => Promise<void>
}

const readBody = (request: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    request.on("error", reject)
  })

const json = (response: ServerResponse, status: number, body: unknown) => {
  response.writeHead(status, { "content-type": "application/json" })
  response.end(JSON.stringify(body))
}

const wireCalls = (calls: ReadonlyArray<ToolCall>, index: number) =>
  calls.map((call, i) => ({
    id: call.id ?? `call_${index}_${i}`,
    type: "function" as const,
    function: { name: call.name, arguments: JSON.stringify(call.arguments) },
  }))

const withTotal = (usage: Usage | undefined): Usage | undefined =>
  usage === undefined
    ? undefined
    : { ...usage, total_tokens: usage.total_tokens ?? usage.prompt_tokens + usage.completion_tokens }

const send = (response: ServerResponse, reply: Extract<Reply, { _tag: "answer" }>, index: number, stream: boolean) => {
  const id = `chatcmpl-${index}`
  const created = 1_700_000_000 + index
  const calls = wireCalls(reply.toolCalls ?? [], index)
  const finish = reply.finish ?? (calls.length > 0 ? "tool_calls" : "stop")
  const usage = withTotal(reply.usage)
  if (!stream) {
    const message = {
      role: "assistant",
      content: reply.text ?? null,
      ...(calls.length > 0 ? { tool_calls: calls } : {}),
    }
    return json(response, 200, {
      id,
      object: "chat.completion",
      created,
      model: "scripted",
      choices: [{ index: 0, message, finish_reason: finish }],
      ...(usage ? { usage } : {}),
    })
  }
  response.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  })
  const chunk = (fields: Record<string, unknown>) =>
    response.write(
      `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: "scripted", ...fields })}\n\n`,
    )
  chunk({ choices: [{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }] })
  if (reply.text !== undefined && reply.text !== "")
    chunk({ choices: [{ index: 0, delta: { content: reply.text }, finish_reason: null }] })
  for (const [i, call] of calls.entries())
    chunk({ choices: [{ index: 0, delta: { tool_calls: [{ index: i, ...call }] }, finish_reason: null }] })
  chunk({ choices: [{ index: 0, delta: {}, finish_reason: finish }] })
  if (usage) chunk({ choices: [], usage })
  response.write("data: [DONE]\n\n")
  response.end()
}

/** Starts the scripted model on 127.0.0.1 (a free port unless one is given). */
export const start = (respond: Responder, options: { readonly port?: number } = {}): Promise<ModelServer> => {
  const requests: Array<Recorded> = []
  const server = createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0]!
    if (request.method === "GET" && path.endsWith("/models"))
      return json(response, 200, { object: "list", data: [{ id: "scripted", object: "model", owned_by: "test" }] })
    if (request.method !== "POST" || !path.endsWith("/chat/completions"))
      return json(response, 404, { error: { message: `no route ${request.method} ${path}` } })
    readBody(request).then(
      (text) => {
        const body = JSON.parse(text) as ChatRequest
        const index = requests.length
        let reply: Reply
        try {
          reply = respond(body, index)
        } catch (cause) {
          // A script that has no answer is a failed scenario; say so to the client and keep the request for the test.
          reply = httpError(500, `scripted model: ${cause instanceof Error ? cause.message : String(cause)}`)
        }
        requests.push({ index, path, body, reply })
        if (reply._tag === "error") return json(response, reply.status, reply.body)
        if ((reply.delayMs ?? 0) > 0)
          setTimeout(() => send(response, reply, index, body.stream === true), reply.delayMs)
        else send(response, reply, index, body.stream === true)
      },
      (cause) => json(response, 400, { error: { message: String(cause) } }),
    )
  })
  return new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      const port = (server.address() as AddressInfo).port
      resolve({
        port,
        baseURL: `http://127.0.0.1:${port}/v1`,
        requests,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections()
            server.close(() => done())
          }),
      })
    })
  })
}

/** The text of a message's content (string content, or its text parts joined). */
export const contentText = (message: ChatMessage): string =>
  typeof message.content === "string"
    ? message.content
    : (message.content ?? []).map((part) => (part.type === "text" ? (part.text ?? "") : "")).join("")
