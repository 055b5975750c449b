import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as Ids from "../src/Ids.ts"
import type { AssistantMessage, FilePart, Message, ToolPart, ToolState } from "../src/Message.ts"
import type { ModelMessage, ToolResultPart } from "../src/ModelMessage.ts"
import * as Render from "../src/Render.ts"
import {
  assistant,
  compaction,
  completed,
  errored,
  file,
  id,
  MODEL,
  OTHER_MODEL,
  pending,
  reasoning,
  running,
  stepFinish,
  stepStart,
  subtask,
  summary,
  text,
  tool,
  user,
} from "./support/build.ts"
import { RUNS } from "./support/runs.ts"

const PNG = "data:image/png;base64,iVBORw0KGgo="

/** The tool results of a rendered list, by call id. */
const resultsOf = (messages: ReadonlyArray<ModelMessage>): Map<string, ToolResultPart> => {
  const out = new Map<string, ToolResultPart>()
  for (const m of messages)
    if (m.role === "tool" || m.role === "assistant")
      for (const part of m.content) if (part.type === "tool-result") out.set(part.toolCallId, part)
  return out
}

const only = (messages: ReadonlyArray<Message>, options?: Render.Options) => Render.toModelMessages(messages, options)

describe("Render: completed tools (§3.7)", () => {
  it("M2 given a pruned tool result, when rendered, then the output is the cleared placeholder", () => {
    const a = assistant("a1", "u1", [
      tool("bash", completed("this should be cleared", { input: { cmd: "ls" }, compactedAt: 1 })),
    ])
    const [call, results] = only([a])
    expect(call).toEqual({
      role: "assistant",
      content: [{ type: "tool-call", toolCallId: "call_a1_0", toolName: "bash", input: { cmd: "ls" } }],
    })
    expect(results).toEqual({
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "call_a1_0",
          toolName: "bash",
          output: { type: "text", value: "[Old tool result content cleared]" },
        },
      ],
    })
  })

  it("M2 given a pruned tool result with attachments, when rendered, then the attachments are dropped too", () => {
    const a = assistant("a1", "u1", [
      tool(
        "read",
        completed("x", {
          compactedAt: 1,
          attachments: [{ ...file("image/png", "p.png", PNG), id: Ids.unsafe.part("prt_f") }],
        }),
      ),
    ])
    const output = resultsOf(only([a])).get("call_a1_0")?.output
    expect(output).toEqual({ type: "text", value: Render.CLEARED_TEXT })
    expect(JSON.stringify(only([a], { mediaInToolResults: false }))).not.toContain("iVBOR")
  })

  it("M3 given output abcdefghij and toolOutputMaxChars 4, when rendered, then it is cut with the omitted count", () => {
    const a = assistant("a1", "u1", [tool("bash", completed("abcdefghij"))])
    expect(resultsOf(only([a], { toolOutputMaxChars: 4 })).get("call_a1_0")?.output).toEqual({
      type: "text",
      value: "abcd\n[Tool output truncated for compaction: omitted 6 chars]",
    })
  })

  it("M3 given output no longer than the cap (or a cap of 0), when rendered, then it is unchanged", () => {
    const a = assistant("a1", "u1", [tool("bash", completed("abcd"))])
    expect(resultsOf(only([a], { toolOutputMaxChars: 4 })).get("call_a1_0")?.output).toEqual({
      type: "text",
      value: "abcd",
    })
    expect(resultsOf(only([a], { toolOutputMaxChars: 0 })).get("call_a1_0")?.output).toEqual({
      type: "text",
      value: "abcd",
    })
  })

  it("given attachments, when rendered, then data-URL attachments ride in the result as base64 content", () => {
    const attachments: Array<FilePart> = [
      { ...file("image/png", "pixel.png", PNG), id: Ids.unsafe.part("prt_f1") },
      { ...file("application/pdf", undefined, "https://example.com/x.pdf"), id: Ids.unsafe.part("prt_f2") },
    ]
    const a = assistant("a1", "u1", [tool("read", completed("Image read", { attachments }))])
    expect(resultsOf(only([a])).get("call_a1_0")?.output).toEqual({
      type: "content",
      value: [
        { type: "text", text: "Image read" },
        { type: "file", data: { type: "data", data: "iVBORw0KGgo=" }, mediaType: "image/png", filename: "pixel.png" },
      ],
    })
  })

  it("given attachments and stripMedia, when rendered, then every attachment is dropped without a placeholder", () => {
    const attachments: Array<FilePart> = [{ ...file("image/png", "pixel.png", PNG), id: Ids.unsafe.part("prt_f1") }]
    const a = assistant("a1", "u1", [tool("read", completed("Image read", { attachments }))])
    const rendered = only([a], { stripMedia: true })
    expect(resultsOf(rendered).get("call_a1_0")?.output).toEqual({ type: "text", value: "Image read" })
    expect(JSON.stringify(rendered)).not.toContain("Attached")
  })

  it("given a provider without media in tool results, when rendered, then media moves to a user message after the results", () => {
    const attachments: Array<FilePart> = [
      { ...file("image/png", "pixel.png", PNG), id: Ids.unsafe.part("prt_f1") },
      { ...file("application/json", "d.json", "data:application/json;base64,e30="), id: Ids.unsafe.part("prt_f2") },
    ]
    const a = assistant("a1", "u1", [tool("read", completed("Image read", { attachments }))])
    const rendered = Render.render([a], { mediaInToolResults: false })
    expect(rendered.map((r) => r.message.role)).toEqual(["assistant", "tool", "user"])
    expect(rendered.every((r) => r.sourceMessageId === id("a1"))).toBe(true)
    expect(resultsOf(rendered.map((r) => r.message)).get("call_a1_0")?.output).toEqual({
      type: "content",
      value: [
        { type: "text", text: "Image read" },
        { type: "file", data: { type: "data", data: "e30=" }, mediaType: "application/json", filename: "d.json" },
      ],
    })
    expect(rendered[2]?.message).toEqual({
      role: "user",
      content: [
        { type: "text", text: "Attached media from tool result:" },
        { type: "file", data: PNG, mediaType: "image/png", filename: "pixel.png" },
      ],
    })
  })
  it("given attachments that are not data URLs with base64 after a comma, when rendered, then only the data URL rides in the result", () => {
    const attachments: Array<FilePart> = [
      // a comma in a remote URL must not be read as the start of base64 data
      { ...file("image/png", "remote.png", "https://example.com/a,b.png"), id: Ids.unsafe.part("prt_f1") },
      // a data URL without a comma has no data
      { ...file("image/png", "broken.png", "data:image/png;base64"), id: Ids.unsafe.part("prt_f2") },
      { ...file("image/png", undefined, PNG), id: Ids.unsafe.part("prt_f3") },
    ]
    const a = assistant("a1", "u1", [tool("read", completed("Image read", { attachments }))])
    expect(resultsOf(only([a])).get("call_a1_0")?.output).toStrictEqual({
      type: "content",
      value: [
        { type: "text", text: "Image read" },
        // no filename key at all when the attachment has none
        { type: "file", data: { type: "data", data: "iVBORw0KGgo=" }, mediaType: "image/png" },
      ],
    })
  })
})

describe("Render: unfinished and failed tools (§2.13)", () => {
  it("given an errored tool, when rendered, then its result is the error text", () => {
    const a = assistant("a1", "u1", [tool("bash", errored("boom"))])
    expect(resultsOf(only([a])).get("call_a1_0")?.output).toEqual({ type: "error-text", value: "boom" })
  })

  it("given an interrupted tool with partial output, when rendered, then its result is that output as text", () => {
    const a = assistant("a1", "u1", [
      tool("bash", errored("Tool execution aborted", { interrupted: true, output: "partial" })),
      tool("bash", errored("Tool execution aborted", { interrupted: true })),
      tool("bash", errored("Tool execution aborted", { interrupted: false, output: "ignored" })),
    ])
    const results = resultsOf(only([a]))
    expect(results.get("call_a1_0")?.output).toEqual({ type: "text", value: "partial" })
    expect(results.get("call_a1_1")?.output).toEqual({ type: "error-text", value: "Tool execution aborted" })
    expect(results.get("call_a1_2")?.output).toEqual({ type: "error-text", value: "Tool execution aborted" })
  })

  it("given pending and running tools, when rendered, then each call is closed with the interrupted error", () => {
    const a = assistant("a1", "u1", [tool("bash", pending({ cmd: "a" })), tool("bash", running({ cmd: "b" }))])
    const [call, results] = only([a])
    expect(call?.role === "assistant" && call.content.map((p) => p.type)).toEqual(["tool-call", "tool-call"])
    expect(results?.role === "tool" && results.content.map((p) => p.output)).toEqual([
      { type: "error-text", value: "[Tool execution was interrupted]" },
      { type: "error-text", value: "[Tool execution was interrupted]" },
    ])
  })

  it("given errored, interrupted and unfinished tools, when rendered, then the call and its results are all there is: no media message follows", () => {
    const calls = [
      tool("bash", errored("boom")),
      tool("bash", errored("Tool execution aborted", { interrupted: true, output: "partial" })),
      tool("bash", pending()),
      tool("bash", running()),
    ]
    for (const [index, call] of calls.entries()) {
      const a = assistant("a1", "u1", [call])
      const output = [
        { type: "error-text", value: "boom" },
        { type: "text", value: "partial" },
        { type: "error-text", value: Render.INTERRUPTED_TEXT },
        { type: "error-text", value: Render.INTERRUPTED_TEXT },
      ][index]
      for (const mediaInToolResults of [true, false])
        expect(only([a], { mediaInToolResults })).toStrictEqual([
          { role: "assistant", content: [{ type: "tool-call", toolCallId: "call_a1_0", toolName: "bash", input: {} }] },
          { role: "tool", content: [{ type: "tool-result", toolCallId: "call_a1_0", toolName: "bash", output }] },
        ])
    }
  })

  it("given a provider-executed tool, when rendered, then its result sits in the assistant message and no tool message follows", () => {
    const a = assistant("a1", "u1", [tool("web_search", completed("found"), { providerExecuted: true }), "done"])
    expect(only([a])).toEqual([
      {
        role: "assistant",
        content: [
          { type: "tool-call", toolCallId: "call_a1_0", toolName: "web_search", input: {}, providerExecuted: true },
          {
            type: "tool-result",
            toolCallId: "call_a1_0",
            toolName: "web_search",
            output: { type: "text", value: "found" },
          },
          { type: "text", text: "done" },
        ],
      },
    ])
  })
})

describe("Render: messages and parts (§2.13)", () => {
  it("given user parts, when rendered, then text, files, marker and subtask follow the rules", () => {
    const u = user(
      "u1",
      "typed",
      text("", {}),
      text("hidden", { ignored: true }),
      text("continue", { synthetic: true }),
      file("text/plain", "a.txt", "file:///a.txt"),
      file("application/x-directory", "src", "file:///src"),
      file("image/png", "cat.png", PNG),
      compaction(),
      subtask("do it"),
    )
    expect(only([u])).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "typed" },
          { type: "text", text: "continue" },
          { type: "file", data: PNG, mediaType: "image/png", filename: "cat.png" },
          { type: "text", text: "What did we do so far?" },
          { type: "text", text: "The following tool was executed by the user" },
        ],
      },
    ])
  })

  it("given stripMedia, when rendered, then user media become placeholders and other files stay", () => {
    const u = user(
      "u1",
      file("image/png", "cat.png", PNG),
      file("application/pdf", undefined, "https://x/doc.pdf"),
      file("application/json", "d.json", "https://x/d.json"),
    )
    expect(only([u], { stripMedia: true })).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "[Attached image/png: cat.png]" },
          { type: "text", text: "[Attached application/pdf: file]" },
          { type: "file", data: "https://x/d.json", mediaType: "application/json", filename: "d.json" },
        ],
      },
    ])
  })

  it("given messages with no parts or nothing to send, when rendered, then they produce no model message", () => {
    const empty = user("u1")
    const ignoredOnly = user("u2", text("x", { ignored: true }))
    const stepsOnly = assistant("a1", "u2", [stepStart(), stepFinish()])
    expect(only([empty, ignoredOnly, stepsOnly])).toEqual([])
  })

  it("M4 given an assistant with an APIError and text, when rendered, then it is dropped", () => {
    const a = assistant("a1", "u1", ["partial answer"], { error: { name: "APIError", message: "bad" } })
    expect(only([a])).toEqual([])
  })

  it("M4 given an aborted assistant with reasoning and text, when rendered, then it is kept", () => {
    const a = assistant("a1", "u1", [reasoning("think"), "answer"], {
      error: { name: "MessageAbortedError", message: "aborted" },
    })
    expect(only([a])).toEqual([
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "think" },
          { type: "text", text: "answer" },
        ],
      },
    ])
  })

  it("M4 given an aborted assistant with only step-start and reasoning, when rendered, then it is dropped", () => {
    const a = assistant("a1", "u1", [stepStart(), reasoning("think")], {
      error: { name: "MessageAbortedError", message: "aborted" },
    })
    expect(only([a])).toEqual([])
  })

  it("given an errored summary, when rendered, then it is never sent", () => {
    expect(only([summary("s1", "c1", "half", { finish: "error", error: { name: "APIError", message: "x" } })])).toEqual(
      [],
    )
  })

  it("given an assistant with three steps, when rendered, then each step is an assistant message followed by its results", () => {
    const a = assistant("a1", "u1", [
      stepStart(),
      "look",
      tool("read", completed("one")),
      stepFinish("tool-calls"),
      stepStart(),
      tool("read", completed("two")),
      stepFinish("tool-calls"),
      stepStart(),
      "done",
      stepFinish(),
    ])
    const rendered = only([a])
    expect(rendered.map((m) => m.role)).toEqual(["assistant", "tool", "assistant", "tool", "assistant"])
    expect(rendered[0]).toEqual({
      role: "assistant",
      content: [
        { type: "text", text: "look" },
        { type: "tool-call", toolCallId: "call_a1_2", toolName: "read", input: {} },
      ],
    })
    expect(rendered[3]?.role === "tool" && rendered[3].content[0]?.toolCallId).toBe("call_a1_5")
    expect(rendered[4]).toEqual({ role: "assistant", content: [{ type: "text", text: "done" }] })
  })

  it("given an assistant of another model, when rendered for a model, then non-empty reasoning becomes text", () => {
    const a = assistant("a1", "u1", [reasoning("think"), reasoning("  "), "answer"])
    expect(only([a], { model: OTHER_MODEL })).toEqual([
      {
        role: "assistant",
        content: [
          { type: "text", text: "think" },
          { type: "text", text: "answer" },
        ],
      },
    ])
    expect(only([a], { model: MODEL })[0]).toEqual({
      role: "assistant",
      content: [
        { type: "reasoning", text: "think" },
        { type: "reasoning", text: "  " },
        { type: "text", text: "answer" },
      ],
    })
  })

  it("given a user file without a filename, when rendered, then its file part has no filename key", () => {
    expect(only([user("u1", file("image/png", undefined, PNG))])).toStrictEqual([
      { role: "user", content: [{ type: "file", data: PNG, mediaType: "image/png" }] },
    ])
  })

  it("given an assistant whose provider or model alone differs from the target, when rendered, then its reasoning becomes text", () => {
    const a = assistant("a1", "u1", [reasoning("think")])
    const asText = [{ role: "assistant", content: [{ type: "text", text: "think" }] }]
    // the same model id from another provider, and another model of the same provider: both are another model
    expect(only([a], { model: { providerId: "openai", modelId: MODEL.modelId } })).toEqual(asText)
    expect(only([a], { model: { providerId: MODEL.providerId, modelId: "claude-other" } })).toEqual(asText)
    expect(only([a], { model: MODEL })).toEqual([
      { role: "assistant", content: [{ type: "reasoning", text: "think" }] },
    ])
  })

  it("given an assistant with an empty text part, when rendered, then the empty text is not sent", () => {
    const a = assistant("a1", "u1", [text(""), "answer", text("")])
    expect(only([a])).toEqual([{ role: "assistant", content: [{ type: "text", text: "answer" }] }])
  })

  it("given several messages, when rendered, then each model message names its source and toModelMessages is the same list", () => {
    const messages = [
      user("u1", "hi"),
      assistant("a1", "u1", [tool("bash", completed("ok")), "done"]),
      user("u2", "bye"),
    ]
    const rendered = Render.render(messages)
    expect(rendered.map((r) => [r.sourceMessageId, r.message.role])).toEqual([
      [id("u1"), "user"],
      [id("a1"), "assistant"],
      [id("a1"), "tool"],
      [id("u2"), "user"],
    ])
    expect(Render.toModelMessages(messages)).toEqual(rendered.map((r) => r.message))
  })

  it("given the same messages twice, when rendered, then the output is equal and the input is untouched", () => {
    const messages = [user("u1", file("image/png", "a.png", PNG)), assistant("a1", "u1", [tool("x", running())])]
    const before = JSON.stringify(messages)
    expect(Render.render(messages, { stripMedia: true })).toEqual(Render.render(messages, { stripMedia: true }))
    expect(JSON.stringify(messages)).toBe(before)
  })
})

describe("Render.serializeToolContent (§3.8)", () => {
  it("V2 given text and an image, when serialised, then the image is a placeholder and no base64 leaks", () => {
    const base64 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB"
    const serialized = Render.serializeToolContent([
      { type: "text", text: "Image read successfully" },
      { type: "file", data: { type: "data", data: base64 }, mediaType: "image/png", filename: "pixel.png" },
    ])
    expect(serialized).toBe("Image read successfully\n[Attached image/png: pixel.png]")
    expect(serialized).not.toContain(base64)
  })
})

// ---------------------------------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------------------------------

const attachmentArb: fc.Arbitrary<FilePart> = fc.record({
  type: fc.constant("file" as const),
  id: fc.constant(Ids.unsafe.part("prt_att")),
  mime: fc.constantFrom("image/png", "application/pdf", "application/json", "text/csv"),
  url: fc.constantFrom(PNG, "data:application/json;base64,e30=", "https://example.com/f"),
})

const ORIGINAL = "ORIGINAL-OUTPUT"

const stateArb: fc.Arbitrary<ToolState> = fc.oneof(
  fc.record({ status: fc.constant("pending" as const), input: fc.constant({}) }),
  fc.record({ status: fc.constant("running" as const), input: fc.constant({ cmd: "ls" }) }),
  fc
    .record({
      output: fc.string(),
      compacted: fc.boolean(),
      attachments: fc.array(attachmentArb, { maxLength: 3 }),
    })
    .map(({ output, compacted, attachments }) => ({
      status: "completed" as const,
      input: {},
      // Compacted outputs carry a marker string that must never reach the model.
      output: compacted ? `${ORIGINAL}${output}` : output.replaceAll(ORIGINAL, ""),
      attachments,
      ...(compacted ? { compactedAt: 1 } : {}),
    })),
  fc
    .record({
      status: fc.constant("error" as const),
      input: fc.constant({}),
      error: fc.string(),
      metadata: fc.option(
        fc.record({ interrupted: fc.boolean(), output: fc.option(fc.string(), { nil: undefined }) }),
        {
          nil: undefined,
        },
      ),
    })
    .map(({ metadata, ...rest }) => (metadata === undefined ? rest : { ...rest, metadata })),
)

type PartSpec =
  | { kind: "tool"; state: ToolState; providerExecuted: boolean }
  | { kind: "text" | "reasoning" | "step-start" | "step-finish" }

const partSpecArb: fc.Arbitrary<PartSpec> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant("tool" as const), state: stateArb, providerExecuted: fc.boolean() }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constantFrom("text" as const, "reasoning" as const, "step-start" as const, "step-finish" as const),
    }),
  },
)

const errorArb = fc.option(
  fc.record({ name: fc.constantFrom("APIError", "MessageAbortedError"), message: fc.constant("x") }),
  { nil: undefined, freq: 4 },
)

/** Assistant messages with arbitrary tool states, steps and errors; call ids unique across the window. */
const windowArb: fc.Arbitrary<Array<AssistantMessage>> = fc
  .array(fc.record({ parts: fc.array(partSpecArb, { maxLength: 8 }), error: errorArb }), { maxLength: 5 })
  .map((messages) =>
    messages.map(({ parts, error }, m) => {
      const built = parts.map((spec, p) => {
        const partId = Ids.unsafe.part(`prt_${m}_${p}`)
        switch (spec.kind) {
          case "tool":
            return {
              type: "tool" as const,
              id: partId,
              callId: `call_${m}_${p}`,
              tool: "bash",
              state: spec.state,
              ...(spec.providerExecuted ? { providerExecuted: true } : {}),
            } satisfies ToolPart
          case "text":
          case "reasoning":
            return { type: spec.kind, id: partId, text: "t" }
          case "step-start":
            return { type: "step-start" as const, id: partId }
          default:
            return { type: "step-finish" as const, id: partId, reason: "stop" }
        }
      })
      return { ...assistant(`a${m}`, "u0", []), parts: built, ...(error ? { error } : {}) }
    }),
  )

const optionsArb: fc.Arbitrary<Render.Options> = fc.record({
  stripMedia: fc.boolean(),
  toolOutputMaxChars: fc.option(fc.nat(50), { nil: undefined }),
  mediaInToolResults: fc.boolean(),
  model: fc.option(fc.constantFrom(MODEL, OTHER_MODEL), { nil: undefined }),
})

describe("Render properties", () => {
  it("every tool call in a rendered window has a result, in the same assistant message or the tool message right after it", () => {
    fc.assert(
      fc.property(windowArb, optionsArb, (window, options) => {
        const rendered = Render.toModelMessages(window, options)
        rendered.forEach((message, index) => {
          if (message.role !== "assistant") return
          const next = rendered[index + 1]
          for (const part of message.content) {
            if (part.type !== "tool-call") continue
            const closes = (m: ModelMessage | undefined) =>
              m !== undefined &&
              (m.role === "assistant" || m.role === "tool") &&
              m.content.some((p) => p.type === "tool-result" && p.toolCallId === part.toolCallId)
            expect(part.providerExecuted ? closes(message) : closes(next) && next?.role === "tool").toBe(true)
          }
        })
        // And every result answers a call that was rendered.
        const calls = new Set(
          rendered.flatMap((m) =>
            m.role === "assistant" ? m.content.flatMap((p) => (p.type === "tool-call" ? [p.toolCallId] : [])) : [],
          ),
        )
        for (const callId of resultsOf(rendered).keys()) expect(calls.has(callId)).toBe(true)
      }),
      RUNS,
    )
  })

  it("rendering never emits a compacted output: pruned results are the placeholder, without attachments", () => {
    fc.assert(
      fc.property(windowArb, optionsArb, (window, options) => {
        const rendered = Render.toModelMessages(window, options)
        expect(JSON.stringify(rendered)).not.toContain(ORIGINAL)
        const results = resultsOf(rendered)
        for (const a of window)
          for (const part of a.parts)
            if (part.type === "tool" && part.state.status === "completed" && part.state.compactedAt !== undefined) {
              const result = results.get(part.callId)
              if (result) expect(result.output).toEqual({ type: "text", value: Render.CLEARED_TEXT })
            }
      }),
      RUNS,
    )
  })
})
