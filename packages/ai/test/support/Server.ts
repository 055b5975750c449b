// A loopback OpenAI-compatible chat completions server for tests: 127.0.0.1 only, an ephemeral port, and a close()
// that drops every open connection, so a hanging response never outlives its test.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

/** One request the server received. */
export interface Received {
  readonly path: string
  readonly body: Record<string, unknown>
  /** Set when the client closed the connection before the response ended (an abort). */
  closedEarly: boolean
}

/** Answers one request; `index` counts requests from 0. */
export type Handler = (response: ServerResponse, received: Received, index: number) => void

/** A running loopback server. */
export interface LoopbackServer {
  readonly baseURL: string
  readonly received: ReadonlyArray<Received>
  readonly close: () => Promise<void>
}

const readBody = (request: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    let text = ""
    request.setEncoding("utf8")
    request.on("data", (chunk: string) => {
      text += chunk
    })
    request.on("end", () => resolve(text))
    request.on("error", reject)
  })

/** Starts a server on 127.0.0.1 with an ephemeral port. */
export const startServer = async (handler: Handler): Promise<LoopbackServer> => {
  const received: Array<Received> = []
  const server = createServer((request, response) => {
    void readBody(request).then((text) => {
      const entry: Received = { path: request.url ?? "", body: JSON.parse(text || "{}"), closedEarly: false }
      received.push(entry)
      response.on("close", () => {
        if (!response.writableEnded) entry.closedEarly = true
      })
      handler(response, entry, received.length - 1)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/** Sends a JSON response. */
export const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  response.writeHead(status, { "content-type": "application/json", ...headers })
  response.end(JSON.stringify(body))
}

/** OpenAI usage with 20 cached prompt tokens and 3 reasoning tokens. */
export const USAGE = {
  prompt_tokens: 120,
  completion_tokens: 15,
  total_tokens: 135,
  prompt_tokens_details: { cached_tokens: 20 },
  completion_tokens_details: { reasoning_tokens: 3 },
}

const chunk = (delta: Record<string, unknown>, finishReason: string | null = null, usage?: unknown) => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  created: 0,
  model: "compactor",
  choices: [{ index: 0, delta, finish_reason: finishReason }],
  ...(usage === undefined ? {} : { usage }),
})

/** The SSE events of a streamed answer made of `pieces`, ending with `stop` and `USAGE`. */
export const sseAnswer = (pieces: ReadonlyArray<string>): Array<unknown> => [
  chunk({ role: "assistant", content: "" }),
  ...pieces.map((content) => chunk({ content })),
  chunk({}, "stop", USAGE),
]

/** Writes SSE events, `intervalMs` apart (0: at once), then `[DONE]`; stops if the client goes away. */
export const streamEvents = (response: ServerResponse, events: ReadonlyArray<unknown>, intervalMs = 0) => {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  let index = 0
  const next = () => {
    if (response.destroyed) return
    if (index >= events.length) {
      response.end("data: [DONE]\n\n")
      return
    }
    response.write(`data: ${JSON.stringify(events[index++])}\n\n`)
    if (intervalMs > 0) setTimeout(next, intervalMs).unref()
    else next()
  }
  next()
}

/** A non-streamed chat completion with `USAGE`. */
export const completion = (content: string) => ({
  id: "chatcmpl-1",
  object: "chat.completion",
  created: 0,
  model: "compactor",
  choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
  usage: USAGE,
})
