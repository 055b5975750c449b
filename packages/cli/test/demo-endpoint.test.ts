/**
 * The demo against an OpenAI-compatible endpoint (`PIVOT_BASE_URL`, `PIVOT_MODEL`): the same agent loop through
 * `@ai-sdk/openai-compatible`, here reaching a loopback server started by the test. The server plays a model that
 * reads the file it is asked about and then answers; its summaries come from the same server.
 */
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { Message } from "@pivot/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Demo from "../src/demo/Demo.ts"
import * as Example from "../src/demo/Example.ts"
import { expand } from "../src/demo/Expand.ts"
import { plain } from "../src/demo/Style.ts"

const SUMMARY = "## Objective\n- Read the two files the user asked about."

const example = Example.decode({
  title: "endpoint",
  model: { providerId: "demo", modelId: "tiny", limits: { context: 9_000, output: 1_000 } },
  system: ["You are a test agent."],
  config: { prune: true },
  summaries: [],
  turns: ["src/a.ts", "src/b.ts"].map((filePath) => ({
    user: `What is in ${filePath}?`,
    steps: [
      { tools: [{ tool: "read", input: { filePath }, output: { lines: 400 } }] },
      { text: `${filePath} holds code.` },
    ],
  })),
})

interface Request {
  readonly messages: ReadonlyArray<{ readonly role: string; readonly content?: unknown }>
  readonly tools?: ReadonlyArray<unknown>
  readonly model: string
}

const requests: Array<Request> = []
let server: http.Server
let baseURL = ""
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-demo-endpoint-"))

/** A chat completion: a tool call when the newest message is the user's, else the text answer. */
const complete = (request: Request) => {
  const last = request.messages.at(-1)
  const promptTokens = Math.ceil(JSON.stringify(request.messages).length / 4)
  const usage = { prompt_tokens: promptTokens, completion_tokens: 20, total_tokens: promptTokens + 20 }
  const choice = (message: Record<string, unknown>, finish: string) => ({
    id: `chatcmpl-${requests.length}`,
    object: "chat.completion",
    created: 1_780_000_000,
    model: request.model,
    choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: finish }],
    usage,
  })
  if (request.tools === undefined) return choice({ content: SUMMARY }, "stop")
  if (last?.role === "user") {
    const asked = /src\/\w+\.ts/.exec(JSON.stringify(last.content))?.[0] ?? "src/a.ts"
    const call = {
      id: `call_${requests.length}`,
      type: "function",
      function: { name: "read", arguments: JSON.stringify({ filePath: asked }) },
    }
    return choice({ content: null, tool_calls: [call] }, "tool_calls")
  }
  return choice({ content: "It holds code." }, "stop")
}

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = ""
    req.on("data", (chunk) => {
      body += chunk
    })
    req.on("end", () => {
      const request = JSON.parse(body) as Request
      requests.push(request)
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify(complete(request)))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
})

afterAll(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
  fs.rmSync(dir, { recursive: true, force: true })
})

describe("given PIVOT_BASE_URL and PIVOT_MODEL", () => {
  it("then endpointFrom reads them, with the optional key and compaction model", () => {
    expect(Demo.endpointFrom({})).toBeUndefined()
    expect(Demo.endpointFrom({ PIVOT_BASE_URL: "http://x/v1" })).toBeUndefined()
    expect(
      Demo.endpointFrom({
        PIVOT_BASE_URL: "http://x/v1",
        PIVOT_MODEL: "m",
        PIVOT_API_KEY: "k",
        PIVOT_COMPACTION_MODEL: "s",
      }),
    ).toEqual({ baseURL: "http://x/v1", model: "m", apiKey: "k", compactionModel: "s" })
  })

  it("when the demo runs, then the endpoint answers the turns, the tools answer from the example, and it pivots", async () => {
    const lines: Array<string> = []
    const outcome = await Demo.run({
      example,
      db: path.join(dir, "demo.db"),
      out: (line) => lines.push(line),
      style: plain,
      width: 100,
      endpoint: { baseURL, model: "served-model", compactionModel: "served-summarizer" },
    })
    expect(outcome.error).toBeUndefined()
    expect(outcome.model).toBeUndefined()
    const events = outcome.events.map((l) => l.event)
    const steps = events.flatMap((e) => (e._tag === "AssistantStepRecorded" ? [e.message] : []))
    expect(steps.map((m) => m.model)).toEqual(steps.map(() => ({ providerId: "endpoint", modelId: "served-model" })))
    const outputs = steps.flatMap((m) =>
      m.parts.flatMap((p) => (p.type === "tool" && p.state.status === "completed" ? [p.state.output] : [])),
    )
    expect(outputs).toEqual(["src/a.ts", "src/b.ts"].map((filePath) => expand("read", { filePath }, { lines: 400 })))
    // The second turn fills the 8,000-token window: the endpoint's compaction model writes the summary.
    const finished = events.find((e) => e._tag === "SummaryFinished")
    expect(finished?._tag === "SummaryFinished" && Message.summaryText(finished.summary)).toContain(SUMMARY)
    expect(requests.some((r) => r.model === "served-summarizer" && r.tools === undefined)).toBe(true)
    expect(requests.filter((r) => r.model === "served-model").every((r) => r.tools !== undefined)).toBe(true)
    expect(lines.join("\n")).toContain("◆ pivot 1:")
    expect(lines.join("\n")).toContain("summaries: served-summarizer, pivot's extractive fallback if it fails")
  }, 30_000)
})
