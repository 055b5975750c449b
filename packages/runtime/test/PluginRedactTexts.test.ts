/**
 * A redaction plugin sees every text the summariser reads — user text, reasoning, assistant text, tool inputs (every
 * string however deep), tool outputs and errors — and what it answers goes back
 * into the same places, in order, with everything that is not text left as it was (issue 18, mutation run). Tool media
 * never reaches this input (the summariser's head is rendered with media stripped).
 */
import type { Ids } from "@pivot/core"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { captured, run, SESSION, services, stub, used } from "./support/harness.ts"

const PIXEL = "data:image/png;base64,iVBORw0KGgo="

const session = Effect.gen(function* () {
  const { cm, sessions } = yield* services
  yield* cm.recordUserMessage(SESSION, { text: "u1 bluebird" })
  yield* cm.recordAssistantStep(SESSION, {
    parts: [
      { type: "reasoning", text: "r1 bluebird" },
      { type: "text", text: "t1 bluebird" },
      {
        type: "tool",
        callId: "call_read",
        tool: "read",
        state: {
          status: "completed",
          input: { path: "p1 bluebird", opts: { list: ["l1 bluebird", 7, true, null], depth: 2 } },
          output: "o1 bluebird",
          title: "read",
        },
      },
      {
        type: "tool",
        callId: "call_bash",
        tool: "bash",
        state: { status: "error", input: { command: "c1 bluebird" }, error: "e1 bluebird" },
      },
      // A tool the provider ran: its result travels inside the assistant message.
      {
        type: "tool",
        callId: "call_web",
        tool: "web_search",
        providerExecuted: true,
        state: { status: "completed", input: { query: "q1 bluebird" }, output: "w1 bluebird", title: "web" },
      },
      {
        type: "tool",
        callId: "call_shot",
        tool: "screenshot",
        state: {
          status: "completed",
          input: {},
          output: "s1 bluebird",
          title: "shot",
          attachments: [
            { type: "file", id: "prt_shot_file" as Ids.PartId, mime: "image/png", url: PIXEL, filename: "shot.png" },
          ],
        },
      },
    ],
    usage: used(1_000),
    finish: "tool-calls",
  })
  yield* cm.recordAssistantStep(SESSION, {
    parts: [{ type: "text", text: "t2 bluebird" }],
    usage: used(1_200),
    finish: "stop",
  })
  // A file the user attached that is neither media nor inlined text reaches the summariser as a file part.
  yield* cm.recordUserMessage(SESSION, {
    parts: [
      { type: "text", text: "u2 bluebird" },
      { type: "file", mime: "text/csv", url: "data:text/csv;base64,YSxi", filename: "notes.csv" },
      { type: "text", text: "u3 bluebird" },
    ],
  })
  yield* cm.compact(SESSION)
  return yield* sessions.events(SESSION)
})

describe("a redaction plugin over the summariser's input", () => {
  it("answers go back into the texts they came from, in order; numbers, booleans and nulls are untouched", async () => {
    const s = stub()
    const seen: Array<ReadonlyArray<string>> = []
    await run(session, {
      summarizer: s,
      options: {
        plugins: [
          {
            name: "numbering",
            redact: ({ stage, texts }) => {
              if (stage === "summarizer-input") seen.push(texts)
              return { texts: texts.map((t, i) => `#${i}#${t.replaceAll("bluebird", "[bird]")}`) }
            },
          },
        ],
      },
    })
    const texts = seen[0]!
    const sent = captured(s.requests[0])
    expect(sent).not.toContain("bluebird")
    // Every text the plugin answered is in the request, each once, in the order the plugin was given them.
    const order = [...sent.matchAll(/#(\d+)#/g)].map((m) => Number(m[1]))
    expect(order).toEqual(texts.map((_, i) => i))
    for (const [i, text] of texts.entries())
      expect(sent).toContain(JSON.stringify(`#${i}#${text.replaceAll("bluebird", "[bird]")}`).slice(1, -1))
    // The plugin saw each kind of text.
    for (const probe of ["u1", "r1", "t1", "p1", "l1", "o1", "c1", "e1", "q1", "w1", "s1", "t2", "u2", "u3"])
      expect(texts.some((t) => t.startsWith(probe))).toBe(true)
    // What is not text keeps its value and place.
    expect(sent).toMatch(/"list":\["#\d+#l1 \[bird\]",7,true,null\],"depth":2/)
    // The summariser input strips tool media (SummaryInput): a plugin answer cannot bring it back.
    expect(sent).not.toContain("iVBORw0KGgo=")
    expect(sent).toContain(
      '{"type":"file","data":"data:text/csv;base64,YSxi","mediaType":"text/csv","filename":"notes.csv"}',
    )
  })

  it("a plugin that changes nothing leaves the request as it would be without plugins", async () => {
    const plain = stub()
    await run(session, { summarizer: plain })
    const unchanged = stub()
    await run(session, {
      summarizer: unchanged,
      options: { plugins: [{ name: "noop", redact: ({ texts }) => ({ texts }) }] },
    })
    expect(captured(unchanged.requests[0])).toBe(captured(plain.requests[0]))
    expect(captured(plain.requests[0])).toContain("bluebird")
  })

  it("pivot's own redaction of the input records where each secret was, with or without a part", async () => {
    const token = ["ghp_", "0123456789abcdefghijABCDEFGHIJ012345"].join("")
    const s = stub()
    const events = await run(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        const { messageId } = yield* cm.recordUserMessage(SESSION, { text: `use ${token}`, system: `token ${token}` })
        yield* cm.recordAssistantStep(SESSION, {
          parts: [{ type: "text", text: "ok" }],
          usage: used(500),
          finish: "stop",
        })
        yield* cm.recordUserMessage(SESSION, { text: "next" })
        yield* cm.compact(SESSION)
        return { messageId, events: yield* sessions.events(SESSION) }
      }),
      { summarizer: s },
    )
    expect(captured(s.requests[0])).not.toContain(token)
    const input = events.events.find((e) => e._tag === "SecretsRedacted" && e.stage === "summarizer-input")
    const findings = input?._tag === "SecretsRedacted" ? input.findings : []
    expect(findings).toHaveLength(2)
    expect(findings[0]).toStrictEqual({
      messageId: events.messageId,
      partId: expect.stringMatching(/^prt_/),
      field: "text",
      kind: "github-token",
    })
    expect(findings[1]).toStrictEqual({ messageId: events.messageId, field: "system", kind: "github-token" })
  })

  it("a head budgeted out is digested with the previous summary, which the next summariser reads", async () => {
    const small = { ref: { providerId: "small", modelId: "s" }, limits: { context: 8_000, output: 2_000 } }
    const s = stub("FIRST-SUMMARY-MARK: the user is porting the parser")
    await run(
      Effect.gen(function* () {
        const { cm } = yield* services
        const turns = (from: number) =>
          Effect.gen(function* () {
            for (let i = from; i < from + 40; i++) {
              yield* cm.recordUserMessage(SESSION, {
                text: `request ${i}: ${"lorem ipsum dolor sit amet ".repeat(40)}`,
              })
              yield* cm.recordAssistantStep(SESSION, {
                parts: [{ type: "text", text: "done" }],
                usage: used(1_000),
                finish: "stop",
              })
            }
          })
        yield* turns(0)
        yield* cm.compact(SESSION)
        yield* turns(40)
        yield* cm.compact(SESSION)
      }),
      { summarizer: s, options: { compactionModel: small, config: { tail_turns: 0 } } },
    )
    expect(s.requests).toHaveLength(2)
    // The second call's head does not fit: its oldest messages, the first summary among them, become a digest that
    // keeps what the first summary said.
    expect(captured(s.requests[1])).toContain("FIRST-SUMMARY-MARK")
  })
})
