/** The retention check: the exact artifacts of a span and which the summary names, with artifacts planted at its edges. */
import { ArtifactCheck, type Message, Recall, Render } from "@pivot/core"
import { describe, expect, it } from "vitest"
import * as E from "./support/events.ts"

const tool = (id: string, name: string, input: Record<string, unknown>, status: "completed" | "error" = "completed") =>
  ({
    type: "tool",
    id: E.part(`prt_${id}`),
    callId: `call_${id}`,
    tool: name,
    state:
      status === "completed"
        ? { status, input, output: "ok", title: name }
        : { status, input, error: "Expected ';' at 3:14" },
  }) as Message.AssistantPart

const user = (id: string, text: string) => E.userMessage(id, text)
const step = (id: string, ...parts: Array<Message.AssistantPart>) => E.assistantMessage(id, "u1", parts)

describe("ArtifactCheck.check", () => {
  const span: Array<Message.Message> = [
    user("u1", "The parser test fails on nested arrays, please fix the tokenizer"),
    step(
      "a1",
      tool("r1", "read", { filePath: "src/parser/tokenizer.ts" }),
      tool("b1", "bash", { command: "npm test -- parser" }),
    ),
    step(
      "a2",
      tool("e1", "edit", { filePath: "src/parser/tokenizer.ts" }),
      tool("b2", "bash", { command: "tsc -b" }, "error"),
    ),
  ]

  it("given a summary naming everything, then every artifact is named", () => {
    const summary =
      "Fixed the tokenizer for nested arrays so the parser test passes. Read and edited src/parser/tokenizer.ts; " +
      "ran `npm test -- parser` and `tsc -b`, which failed with Expected ';' at 3:14."
    const checked = ArtifactCheck.check(span, summary)
    expect(checked).toEqual([
      { kind: "file-read", text: "src/parser/tokenizer.ts", named: true },
      { kind: "file-edited", text: "src/parser/tokenizer.ts", named: true },
      { kind: "command", text: "npm test -- parser", named: true },
      { kind: "command", text: "tsc -b", named: true },
      { kind: "error", text: "bash: Expected ';' at 3:14", named: true },
      { kind: "request", text: "The parser test fails on nested arrays, please fix the tokenizer", named: true },
    ])
    expect(ArtifactCheck.tally(checked)).toMatchObject({ total: 6, named: 6 })
  })

  it("given a summary that forgot the task and the files, then those are not named", () => {
    const checked = ArtifactCheck.check(span, "We ran npm test -- parser. Work continues.")
    const named = Object.fromEntries(checked.map((a) => [`${a.kind} ${a.text}`, a.named]))
    expect(named["command npm test -- parser"]).toBe(true)
    expect(named["command tsc -b"]).toBe(false)
    expect(named["file-edited src/parser/tokenizer.ts"]).toBe(false)
    expect(named["error bash: Expected ';' at 3:14"]).toBe(false)
    expect(named["request The parser test fails on nested arrays, please fix the tokenizer"]).toBe(false)
    const tally = ArtifactCheck.tally(checked)
    expect(tally.byKind.command).toEqual({ total: 2, named: 1, inView: 1, reachable: 1 })
    expect(tally.named).toBe(1)
  })

  it("given a file named by its last segment only, then it is named; a 2-character segment is not enough", () => {
    expect(
      ArtifactCheck.check([step("a", tool("r", "read", { filePath: "/repo/src/lexer.ts" }))], "lexer.ts is fine")[0]!
        .named,
    ).toBe(true)
    expect(
      ArtifactCheck.check([step("a", tool("r", "read", { filePath: "/repo/src/go" }))], "we go on")[0]!.named,
    ).toBe(false)
  })

  it("given a request with keywords, then half of them suffice; markers and synthetic text are no requests", () => {
    expect(ArtifactCheck.keywords("Please make sure the Parser handles nested arrays!")).toEqual([
      "parser",
      "handles",
      "nested",
      "arrays",
    ])
    const request = [user("u", "Parser handles nested arrays")]
    expect(ArtifactCheck.check(request, "the parser and arrays")[0]!.named).toBe(true)
    expect(ArtifactCheck.check(request, "the parser only")[0]!.named).toBe(false)
    const synthetic = E.userMessage("s", "Continue if you have next steps", {
      parts: [{ type: "text", id: E.part("prt_s"), text: "Continue", synthetic: true }],
    })
    expect(ArtifactCheck.requests([synthetic])).toEqual([])
    expect(ArtifactCheck.requests([user("x", "   ")])).toEqual([])
  })

  it("given more than 50 files (the facts block's cap), then every one is checked", () => {
    const many = Array.from({ length: 60 }, (_, i) =>
      step(`a${i}`, tool(`r${i}`, "read", { filePath: `src/f${i}.ts` })),
    )
    expect(ArtifactCheck.check(many, "").filter((a) => a.kind === "file-read")).toHaveLength(60)
  })
})

describe("ArtifactCheck.withRecall (in view or recallable)", () => {
  const span: Array<Message.Message> = [
    user("u1", "The parser test fails on nested arrays, please fix the tokenizer"),
    step(
      "a1",
      tool("r1", "read", { filePath: "src/parser/tokenizer.ts" }),
      tool("b1", "bash", { command: 'echo "nested [[1]]" | node parse.js' }),
      tool("b2", "bash", { command: "tsc -b" }, "error"),
    ),
  ]
  // What context_recall gives back for the pivot that summarised the span: every part of every message of its head.
  const documents = span.flatMap((m) => Recall.documentsOf(m, "msg_summary"))
  const checked = (summary: string, docs: ReadonlyArray<ArtifactCheck.Document> = documents) =>
    ArtifactCheck.withRecall(ArtifactCheck.check(span, summary), docs)

  it("given a summary that forgot everything, then every artifact of the head is recallable, none in view", () => {
    const all = checked("Work continues.")
    expect(all.map((a) => [a.kind, a.named, a.recallable])).toEqual([
      ["file-read", false, true],
      ["command", false, true],
      ["command", false, true],
      ["error", false, true],
      ["request", false, true],
    ])
    expect(ArtifactCheck.tally(all)).toMatchObject({ total: 5, named: 0, reachable: 5 })
    expect(ArtifactCheck.tally(all).byKind.command).toEqual({ total: 2, named: 0, inView: 0, reachable: 2 })
  })

  it("given a command with quotes, then it is recallable from the strings of its input, not only the escaped JSON", () => {
    const command = 'echo "nested [[1]]" | node parse.js'
    const input = documents.find((d) => d.kind === "input" && d.text.includes("echo"))!
    // The JSON escapes the quotes: the raw text alone does not contain the command.
    expect(input.text.includes(command)).toBe(false)
    expect(
      ArtifactCheck.recallableIn({ kind: "command", text: command, named: false }, ArtifactCheck.textsOfAll([input])),
    ).toBe(true)
    // The same text as a plain (non-input) document is read as it is.
    expect(
      ArtifactCheck.recallableIn(
        { kind: "command", text: command, named: false },
        ArtifactCheck.textsOfAll([{ kind: "assistant", text: input.text }]),
      ),
    ).toBe(false)
  })

  it("given a command with a run of spaces or a tab, then a text that writes it as it was run names it; another command does not", () => {
    const command = "grep -rn  'TODO'\tsrc | sort  -u"
    const span = [user("u1", "List the TODOs"), step("a1", tool("b1", "bash", { command }))]
    const [artifact] = ArtifactCheck.check(span, `Ran \`${command}\``).filter((a) => a.kind === "command")
    expect(artifact).toEqual({ kind: "command", text: command, named: true })
    expect(ArtifactCheck.names("command", command, `Ran \`grep -rn 'TODO' src | sort -u\``)).toBe(true)
    expect(ArtifactCheck.names("command", command, "Ran `grep -rn 'TODO' src | sort`")).toBe(false)
    // Recallable from the strings of its input, as it was run.
    const input = Recall.documentsOf(span[1]!, "msg_summary").find((d) => d.kind === "input")!
    expect(ArtifactCheck.recallableIn({ ...artifact!, named: false }, ArtifactCheck.textsOfAll([input]))).toBe(true)
  })

  it("given no documents (or another span's), then nothing is recallable: in view is what the summary names", () => {
    const none = checked("Read src/parser/tokenizer.ts.", [])
    expect(ArtifactCheck.tally(none)).toMatchObject({ total: 5, named: 1, reachable: 1 })
    const other = checked("Work continues.", [{ kind: "user", text: "an unrelated request about the lexer" }])
    expect(ArtifactCheck.tally(other)).toMatchObject({ total: 5, named: 0, reachable: 0 })
  })

  it("given a document holding a file's last segment of 2, 3 or 4 characters, then 3 is the least that recalls it", () => {
    const file = (last: string) => ({ kind: "file-read" as const, text: `src/${last}`, named: false })
    const texts = ArtifactCheck.textsOfAll([{ kind: "assistant", text: "see ab, abc and abcd" }])
    expect(ArtifactCheck.recallableIn(file("ab"), texts)).toBe(false)
    expect(ArtifactCheck.recallableIn(file("abc"), texts)).toBe(true)
    expect(ArtifactCheck.recallableIn(file("abcd"), texts)).toBe(true)
  })

  it("tallies an artifact of unknown recallability as in view only when named", () => {
    const artifacts: ReadonlyArray<ArtifactCheck.Checked> = [
      { kind: "command", text: "a", named: true },
      { kind: "command", text: "b", named: false },
      { kind: "command", text: "c", named: false, recallable: true },
      { kind: "command", text: "d", named: false, recallable: false },
      { kind: "command", text: "e", named: true, recallable: false },
    ]
    expect(artifacts.map(ArtifactCheck.reachable)).toEqual([true, false, true, false, true])
    expect(ArtifactCheck.tally(artifacts)).toMatchObject({ total: 5, named: 2, inView: 2, reachable: 3 })
  })

  it("given pinned messages kept verbatim, then what they name is in view (named or not by the summary), else not", () => {
    // The same span's first message kept by a pin: its request and nothing else.
    const kept = ArtifactCheck.withRecall(
      ArtifactCheck.check(span, "Work continues."),
      documents,
      Recall.shownDocumentsOf(span[0]!),
    )
    expect(kept.map((a) => [a.kind, a.named, a.pinned, ArtifactCheck.inView(a)])).toEqual([
      ["file-read", false, false, false],
      ["command", false, false, false],
      ["command", false, false, false],
      ["error", false, false, false],
      ["request", false, true, true],
    ])
    expect(ArtifactCheck.tally(kept)).toMatchObject({ total: 5, named: 0, inView: 1, reachable: 5 })
    expect(ArtifactCheck.tally(kept).byKind.request).toEqual({ total: 1, named: 0, inView: 1, reachable: 1 })
    // No pinned message kept: no pinned mark at all (absent, not false).
    expect(checked("Work continues.").every((a) => !("pinned" in a))).toBe(true)
    // Named and pinned counts once; pinned alone without recall is still reachable.
    const marks: ReadonlyArray<ArtifactCheck.Checked> = [
      { kind: "command", text: "a", named: true, pinned: true },
      { kind: "command", text: "b", named: false, pinned: true, recallable: false },
      { kind: "command", text: "c", named: false, pinned: false, recallable: false },
    ]
    expect(marks.map(ArtifactCheck.inView)).toEqual([true, true, false])
    expect(marks.map(ArtifactCheck.reachable)).toEqual([true, true, false])
    expect(ArtifactCheck.tally(marks)).toMatchObject({ total: 3, named: 1, inView: 2, reachable: 2 })
  })
})

describe("ArtifactCheck.shownText (what a window shows the model)", () => {
  const span: Array<Message.Message> = [
    user("u1", "Read the content, then check the toolName"),
    step("a1", tool("b1", "bash", { command: 'echo "nested [[1]]" | node parse.js' })),
  ]
  const window = (messages: ReadonlyArray<Message.Message>) => Render.toModelMessages(messages)
  const named = (messages: ReadonlyArray<Message.Message>, summary: string) =>
    ArtifactCheck.check(
      span,
      ArtifactCheck.shownText([...window(messages), ...window([E.assistantMessage("s", "u1", summary)])]),
    ).map((a) => [a.kind, a.named])

  it("given a window whose parts' field names hold a request's keywords, then they do not name it", () => {
    // Keywords "read", "content", "check", "toolname": the rendered window's JSON has `content` and `toolName`, and a
    // stored step's usage `cacheRead` — none of them text the model is shown.
    const shown = ArtifactCheck.shownText(window([span[1]!]))
    expect(shown).not.toMatch(/content|toolName|cacheRead|role/)
    expect(named([span[1]!], "Work continues.")).toContainEqual(["request", false])
    // The same words in the text shown name it: two of four keywords are half.
    expect(named([span[1]!], "I read the content.")).toContainEqual(["request", true])
    expect(named([span[1]!], "I read it.")).toContainEqual(["request", false])
  })

  it("given a tool call with quotes in its input, then the command is named as written, not JSON-escaped", () => {
    expect(named([span[1]!], "Work continues.")).toContainEqual(["command", true])
    expect(named([], "Work continues.")).toContainEqual(["command", false])
  })

  it("reads every kind of part's text: system, text, reasoning, tool name and input, every kind of tool output", () => {
    const shown = ArtifactCheck.shownText([
      { role: "system", content: "the system prompt" },
      { role: "user", content: [{ type: "text", text: "a request" }] },
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "a thought" },
          { type: "tool-call", toolCallId: "call_1", toolName: "grep", input: { pattern: 'a "b"' } },
        ],
      },
      {
        role: "tool",
        content: [
          { type: "tool-result", toolCallId: "call_1", toolName: "grep", output: { type: "text", value: "out 1" } },
          { type: "tool-result", toolCallId: "call_2", toolName: "x", output: { type: "error-text", value: "err 2" } },
          { type: "tool-result", toolCallId: "call_3", toolName: "x", output: { type: "json", value: { k: "v 3" } } },
          {
            type: "tool-result",
            toolCallId: "call_4",
            toolName: "x",
            output: {
              type: "content",
              value: [
                { type: "text", text: "item 4" },
                { type: "file", data: { type: "data", data: "AAAA" }, mediaType: "image/png" },
              ],
            },
          },
        ],
      },
    ])
    expect(shown.split("\n")).toEqual([
      "the system prompt",
      "a request",
      "a thought",
      "grep",
      '{"pattern":"a \\"b\\""}',
      "pattern",
      'a "b"',
      "out 1",
      "err 2",
      '{"k":"v 3"}',
      "k",
      "v 3",
      "item 4",
    ])
  })
})
