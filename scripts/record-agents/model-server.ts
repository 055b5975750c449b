/**
 * A scripted model on 127.0.0.1 for recording real agent sessions offline: it speaks the Anthropic Messages API
 * (`POST /v1/messages`, server-sent events, what Claude Code calls) and the OpenAI Responses API (`POST
 * /v1/responses`, server-sent events, what Codex CLI calls). What it answers is decided by a script from the request
 * itself (the last user prompt, the tool results since it), so the agents' side requests (titles, quota checks) do
 * not shift the script. Usage is simulated the way a provider's prompt cache bills it: the prompt's tokens estimated
 * at 4 characters each, the prefix the previous call of the same agent already sent read from the cache, the rest
 * written to the cache but the last 3 tokens (reported apart by Anthropic; inside `input_tokens` by the Responses API,
 * as `cached_tokens` and `cache_write_tokens`).
 *
 * Plain `node:http`, no dependency on pivot. Every request body is kept (`requests`), for the recorder's checks.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

/** One answer of the scripted model: text, tool calls, or both. */
export interface Answer {
  readonly text?: string
  readonly calls?: ReadonlyArray<{ readonly name: string; readonly input: Readonly<Record<string, unknown>> }>
  /** Extra prompt tokens reported on top of the estimate (to push an agent over its auto-compact threshold). */
  readonly padTokens?: number
}

/** What the request looked like, as the script sees it. */
export interface Ask {
  readonly api: "anthropic" | "openai"
  /** The last user prompt (text), or "" when none. */
  readonly prompt: string
  /** Tool results sent since that prompt, in order, as text. */
  readonly results: ReadonlyArray<string>
  /** Whether the request offers tools (side requests, like a title, offer none). */
  readonly tools: boolean
  /** Whether this is the agent's compaction request (it asks for a summary of the conversation). */
  readonly compaction: boolean
}

export type Script = (ask: Ask) => Answer

/** A running server: its base URL, the requests it answered, and a way to stop it. */
export interface ModelServer {
  readonly url: string
  readonly requests: Array<{ readonly path: string; readonly body: unknown }>
  readonly close: () => Promise<void>
}

type Json = Record<string, unknown>
const isRecord = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v)

const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content
          .map((c) =>
            isRecord(c) && typeof c.text === "string"
              ? c.text
              : isRecord(c) && c.type === "tool_result"
                ? textOf(c.content)
                : "",
          )
          .join("\n")
      : ""

/** The agents' compaction prompts: Claude Code asks for "a detailed summary of the conversation", Codex for a "CONTEXT CHECKPOINT COMPACTION". */
const COMPACTION = /detailed summary of the conversation|CONTEXT CHECKPOINT COMPACTION/i

/** The text blocks of the last user message (where both agents put their compaction prompt). */
const lastUserText = (messages: ReadonlyArray<Json>): string => {
  const last = [...messages].reverse().find((m) => m.role === "user" && (m.type === undefined || m.type === "message"))
  if (last === undefined) return ""
  return typeof last.content === "string"
    ? last.content
    : Array.isArray(last.content)
      ? last.content.flatMap((b) => (isRecord(b) && typeof b.text === "string" ? [b.text] : [])).join("\n")
      : ""
}

/** The script's view of an Anthropic Messages request. */
const anthropicAsk = (body: Json): Ask => {
  const messages = Array.isArray(body.messages) ? body.messages.filter(isRecord) : []
  const results: Array<string> = []
  let prompt = ""
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!
    if (m.role !== "user") continue
    const blocks = Array.isArray(m.content) ? m.content.filter(isRecord) : [{ type: "text", text: m.content }]
    const toolResults = blocks.filter((b) => b.type === "tool_result")
    const texts = blocks.filter((b) => b.type === "text" && typeof b.text === "string" && !b.text.startsWith("<"))
    results.unshift(...toolResults.map((b) => textOf(b.content)))
    if (toolResults.length === 0 && texts.length > 0) {
      prompt = texts.map((b) => b.text as string).join("\n")
      break
    }
  }
  const tools = Array.isArray(body.tools) && body.tools.length > 0
  return { api: "anthropic", prompt, results, tools, compaction: COMPACTION.test(lastUserText(messages)) }
}

/** The script's view of an OpenAI Responses request. */
const openaiAsk = (body: Json): Ask => {
  const input = Array.isArray(body.input) ? body.input.filter(isRecord) : []
  const results: Array<string> = []
  let prompt = ""
  for (let i = input.length - 1; i >= 0; i--) {
    const item = input[i]!
    if (item.type === "function_call_output" || item.type === "custom_tool_call_output")
      results.unshift(typeof item.output === "string" ? item.output : textOf(item.output))
    if (item.type === "message" && item.role === "user") {
      const text = textOf(item.content)
      if (text.startsWith("<")) continue
      prompt = text
      break
    }
  }
  const tools = Array.isArray(body.tools) && body.tools.length > 0
  return { api: "openai", prompt, results, tools, compaction: COMPACTION.test(lastUserText(input)) }
}

const estimate = (value: unknown): number => Math.ceil(JSON.stringify(value ?? null).length / 4)

/** Simulated prompt caching: what the previous call of the same API sent is read from the cache. */
class Cache {
  private previous = new Map<string, number>()
  usage(api: string, prompt: number) {
    const before = this.previous.get(api) ?? 0
    const read = prompt >= before ? before : 0
    this.previous.set(api, prompt)
    return { read, fresh: prompt - read }
  }
}

const sse = (res: ServerResponse, events: ReadonlyArray<readonly [string | undefined, Json]>) => {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "close" })
  for (const [event, data] of events)
    res.write(`${event === undefined ? "" : `event: ${event}\n`}data: ${JSON.stringify(data)}\n\n`)
  res.end()
}

let counter = 0
const nextId = (prefix: string) => `${prefix}_rec${(++counter).toString().padStart(6, "0")}`

const anthropicReply = (res: ServerResponse, body: Json, answer: Answer, cache: Cache) => {
  const system = estimate(body.system) + estimate(body.tools)
  const prompt = system + estimate(body.messages) + (answer.padTokens ?? 0)
  const { read, fresh } = cache.usage("anthropic", prompt)
  const output = Math.max(1, Math.ceil(((answer.text ?? "").length + estimate(answer.calls ?? [])) / 4))
  const events: Array<readonly [string, Json]> = []
  events.push([
    "message_start",
    {
      type: "message_start",
      message: {
        id: nextId("msg"),
        type: "message",
        role: "assistant",
        model: typeof body.model === "string" ? body.model : "claude-sonnet-4-5",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: Math.min(fresh, 3),
          cache_creation_input_tokens: fresh - Math.min(fresh, 3),
          cache_read_input_tokens: read,
          output_tokens: 1,
        },
      },
    },
  ])
  let index = 0
  if (answer.text !== undefined) {
    events.push([
      "content_block_start",
      { type: "content_block_start", index, content_block: { type: "text", text: "" } },
    ])
    events.push([
      "content_block_delta",
      { type: "content_block_delta", index, delta: { type: "text_delta", text: answer.text } },
    ])
    events.push(["content_block_stop", { type: "content_block_stop", index }])
    index++
  }
  for (const call of answer.calls ?? []) {
    events.push([
      "content_block_start",
      {
        type: "content_block_start",
        index,
        content_block: { type: "tool_use", id: nextId("toolu"), name: call.name, input: {} },
      },
    ])
    events.push([
      "content_block_delta",
      {
        type: "content_block_delta",
        index,
        delta: { type: "input_json_delta", partial_json: JSON.stringify(call.input) },
      },
    ])
    events.push(["content_block_stop", { type: "content_block_stop", index }])
    index++
  }
  events.push([
    "message_delta",
    {
      type: "message_delta",
      delta: { stop_reason: (answer.calls ?? []).length > 0 ? "tool_use" : "end_turn", stop_sequence: null },
      usage: { output_tokens: output },
    },
  ])
  events.push(["message_stop", { type: "message_stop" }])
  sse(res, events)
}

const openaiReply = (res: ServerResponse, body: Json, answer: Answer, cache: Cache) => {
  const prompt = estimate(body.instructions) + estimate(body.tools) + estimate(body.input) + (answer.padTokens ?? 0)
  const { read, fresh } = cache.usage("openai", prompt)
  const output = Math.max(1, Math.ceil(((answer.text ?? "").length + estimate(answer.calls ?? [])) / 4))
  const id = nextId("resp")
  const items: Array<Json> = []
  if (answer.text !== undefined)
    items.push({
      type: "message",
      id: nextId("msg"),
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: answer.text, annotations: [] }],
    })
  for (const call of answer.calls ?? [])
    items.push({
      type: "function_call",
      id: nextId("fc"),
      call_id: nextId("call"),
      name: call.name,
      arguments: JSON.stringify(call.input),
      status: "completed",
    })
  const events: Array<readonly [string, Json]> = []
  const response = { id, object: "response", status: "in_progress", model: body.model, output: [] as Array<Json> }
  events.push(["response.created", { type: "response.created", response }])
  items.forEach((item, output_index) => {
    events.push(["response.output_item.added", { type: "response.output_item.added", output_index, item }])
    events.push(["response.output_item.done", { type: "response.output_item.done", output_index, item }])
  })
  events.push([
    "response.completed",
    {
      type: "response.completed",
      response: {
        ...response,
        status: "completed",
        output: items,
        usage: {
          input_tokens: prompt,
          // Codex reads cache writes too (`cache_write_tokens`, counted inside input_tokens like cached tokens).
          input_tokens_details: { cached_tokens: read, cache_write_tokens: fresh - Math.min(fresh, 3) },
          output_tokens: output,
          output_tokens_details: { reasoning_tokens: 0 },
          total_tokens: prompt + output,
        },
      },
    },
  ])
  sse(res, events)
}

const readBody = (req: IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

/** Starts the scripted model on an ephemeral port of 127.0.0.1. */
export const startModelServer = async (script: Script): Promise<ModelServer> => {
  const requests: Array<{ path: string; body: unknown }> = []
  const cache = new Cache()
  const server = createServer(async (req, res) => {
    const raw = await readBody(req)
    const path = (req.url ?? "").split("?")[0]!
    let body: unknown = raw
    try {
      body = raw === "" ? {} : JSON.parse(raw)
    } catch {
      // kept as text
    }
    requests.push({ path, body })
    if (req.method === "POST" && path.endsWith("/messages/count_tokens") && isRecord(body)) {
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify({ input_tokens: estimate(body.messages) }))
      return
    }
    if (req.method === "POST" && path.endsWith("/messages") && isRecord(body)) {
      anthropicReply(res, body, script(anthropicAsk(body)), cache)
      return
    }
    if (req.method === "POST" && path.endsWith("/responses") && isRecord(body)) {
      openaiReply(res, body, script(openaiAsk(body)), cache)
      return
    }
    if (req.method === "GET" && path.endsWith("/models")) {
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify({ object: "list", data: [], models: [] }))
      return
    }
    res.writeHead(404, { "content-type": "application/json" })
    res.end(JSON.stringify({ error: { type: "not_found_error", message: `no route ${req.method} ${path}` } }))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
