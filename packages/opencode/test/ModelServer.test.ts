import { afterEach, describe, expect, it } from "vitest"
import { answer, httpError, type ModelServer, start } from "./oracle/model-server.ts"

let server: ModelServer | undefined
afterEach(async () => {
  await server?.close()
  server = undefined
})

const chat = (url: string, body: unknown) =>
  fetch(`${url}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  })

/** The JSON payloads of a server-sent-events body, `[DONE]` left out. */
const events = (text: string): Array<any> =>
  text
    .split("\n\n")
    .filter((e) => e.startsWith("data: ") && e !== "data: [DONE]")
    .map((e) => JSON.parse(e.slice("data: ".length)))

describe("the scripted model server", () => {
  it("given a streaming request, then it streams the text, the tool calls, the finish reason and the usage, and records the body", async () => {
    server = await start(() =>
      answer({
        text: "hi",
        toolCalls: [{ name: "read", arguments: { filePath: "/a.txt" } }],
        usage: { prompt_tokens: 120, completion_tokens: 7 },
      }),
    )
    const body = { model: "scripted", stream: true, messages: [{ role: "user", content: "go" }] }
    const response = await chat(server.baseURL, body)
    expect(response.headers.get("content-type")).toBe("text/event-stream")
    const text = await response.text()
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true)
    const chunks = events(text)
    const deltas = chunks.flatMap((c) => c.choices.map((choice: any) => choice.delta))
    expect(deltas.map((d) => d.content ?? "").join("")).toBe("hi")
    expect(deltas.flatMap((d) => d.tool_calls ?? [])).toEqual([
      { index: 0, id: "call_0_0", type: "function", function: { name: "read", arguments: '{"filePath":"/a.txt"}' } },
    ])
    expect(chunks.flatMap((c) => c.choices.map((choice: any) => choice.finish_reason)).filter(Boolean)).toEqual([
      "tool_calls",
    ])
    expect(chunks.at(-1)!.usage).toEqual({ prompt_tokens: 120, completion_tokens: 7, total_tokens: 127 })
    expect(server.requests).toHaveLength(1)
    expect(server.requests[0]!.body).toEqual(body)
  })

  it("given a request without stream, then one chat.completion object answers it", async () => {
    server = await start(() => answer({ text: "plain", usage: { prompt_tokens: 3, completion_tokens: 1 } }))
    const json = (await (await chat(server.baseURL, { model: "m", messages: [] })).json()) as any
    expect(json.object).toBe("chat.completion")
    expect(json.choices[0].message).toEqual({ role: "assistant", content: "plain" })
    expect(json.choices[0].finish_reason).toBe("stop")
  })

  it("given an error reply, then the status and OpenAI's error body are returned, and the request is still recorded", async () => {
    server = await start((_, index) =>
      index === 0 ? httpError(400, "too long", "context_length_exceeded") : answer({}),
    )
    const response = await chat(server.baseURL, { model: "m", messages: [] })
    expect(response.status).toBe(400)
    expect(await response.json()).toEqual({
      error: { message: "too long", type: "invalid_request_error", code: "context_length_exceeded" },
    })
    expect(server.requests.map((r) => r.reply._tag)).toEqual(["error"])
  })

  it("given a script that throws, then the client gets HTTP 500 naming the cause", async () => {
    server = await start(() => {
      throw new Error("no answer scripted")
    })
    const response = await chat(server.baseURL, { model: "m", messages: [] })
    expect(response.status).toBe(500)
    expect(JSON.stringify(await response.json())).toContain("no answer scripted")
  })

  it("given an answer with delayMs, then it is sent after an answer asked later without one (a slow provider)", async () => {
    server = await start((request) =>
      request.model === "slow" ? answer({ text: "slow", delayMs: 2_000 }) : answer({ text: "fast" }),
    )
    const arrived: Array<string> = []
    const ask = async (model: string) => {
      const json = (await (await chat(server!.baseURL, { model, messages: [] })).json()) as any
      arrived.push(json.choices[0].message.content)
    }
    const slow = ask("slow")
    // The slow request is in (recorded, its answer pending) before the fast one is sent.
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    await ask("fast")
    await slow
    expect(arrived).toEqual(["fast", "slow"])
    expect(server.requests.map((r) => r.body.model)).toEqual(["slow", "fast"])
  })
})
