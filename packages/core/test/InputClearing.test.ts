/**
 * Clearing a tool call's input (ADR 0030): the placeholder the model sees (`Render.clearedInput`, at its
 * `INPUT_KEEP_CHARS` boundary), the Decider's `target: "input"` prune, the conversation's state, recall of the
 * original byte for byte, and the token estimates that count what the clearing removes.
 */
import { Conversation, Ids, Ledger, type Message, Recall, Render, Session, Tail, Window } from "@pivot/core"
import { describe, expect, it } from "vitest"
import { assistant, started, user } from "./support/events.ts"
import { given } from "./support/given.ts"

const msg = Ids.unsafe.message
const prt = Ids.unsafe.part

// A string value whose JSON text is exactly `n` characters (its two quotes included).
const jsonOf = (n: number) => "c".repeat(n - 2)

const write = (id: string, input: Record<string, unknown>, status: "completed" | "error" = "completed") =>
  ({
    type: "tool",
    id: prt(`prt_${id}`),
    callId: `call_${id}`,
    tool: "write",
    state:
      status === "completed"
        ? { status, input, output: "Wrote file successfully.", title: "a.ts" }
        : { status, input, error: "Error: oldString not found" },
  }) satisfies Message.AssistantPart

const target = (part: string, extra: { readonly target?: "input" } = { target: "input" }) => ({
  messageId: msg("msg_a1"),
  partId: prt(`prt_${part}`),
  rule: "superseded-writes",
  reason: "why",
  ...extra,
})

describe("Render.clearedInput", () => {
  it("given values whose JSON is INPUT_KEEP_CHARS − 1, INPUT_KEEP_CHARS and + 1 long, then only the last is replaced", () => {
    const keep = Render.INPUT_KEEP_CHARS
    const input = { a: jsonOf(keep - 1), b: jsonOf(keep), c: jsonOf(keep + 1), n: 7 }
    expect(Render.clearedInput(input, "prt_x-input")).toEqual({
      a: input.a,
      b: input.b,
      c: "[Old tool input cleared — recall id: prt_x-input]",
      n: 7,
    })
    // Keys stay in their order; without a recall id the placeholder has none.
    expect(Object.keys(Render.clearedInput(input))).toEqual(["a", "b", "c", "n"])
    expect(Render.clearedInput(input).c).toBe(Render.INPUT_CLEARED_TEXT)
  })

  it("given nested values, then a long array or object is replaced whole", () => {
    const edits = [{ oldString: "x".repeat(150), newString: "y".repeat(150) }]
    expect(Render.clearedInput({ filePath: "a.ts", edits })).toEqual({
      filePath: "a.ts",
      edits: Render.INPUT_CLEARED_TEXT,
    })
  })

  it("inputShed: 0 when no value passes the bound, else the estimate of the JSON it removes", () => {
    expect(Render.inputShed({ filePath: "a.ts", content: jsonOf(Render.INPUT_KEEP_CHARS) })).toBe(0)
    const input = { filePath: "a.ts", content: "z".repeat(4_000) }
    const before = JSON.stringify(input).length
    const after = JSON.stringify(Render.clearedInput(input)).length
    expect(Render.inputShed(input)).toBe(Math.round(before / 4) - Math.round(after / 4))
    expect(Render.inputShed(input)).toBeGreaterThan(990)
  })

  it("recall ids: a part's input id is `<part>-input`, read back from the placeholder and the id", () => {
    expect(Render.inputRecallId("prt_1")).toBe("prt_1-input")
    expect(Render.partOfInputRecallId("prt_1-input")).toBe("prt_1")
    expect(Render.partOfInputRecallId("prt_1")).toBeUndefined()
    expect(Render.partOfInputRecallId("-input")).toBeUndefined()
    expect(Render.inputRecallIdOf(Render.clearedInputText("prt_1-input"))).toBe("prt_1-input")
    expect(Render.inputRecallIdOf(Render.INPUT_CLEARED_TEXT)).toBeUndefined()
    expect(Render.inputRecallIdOf(Render.clearedText("prt_1"))).toBeUndefined()
    expect(Recall.isRecallId("prt_1-input")).toBe(true)
  })
})

describe("Prune with an input target (the Decider)", () => {
  const content = "line\n".repeat(800)
  const events = [
    started(),
    user("u1", "write it"),
    assistant("a1", "u1", [
      write("w1", { filePath: "a.ts", content }),
      write("w2", { filePath: "b.ts", content }, "error"),
      write("w3", { filePath: "c.ts", content: "short" }),
      {
        ...write("w4", { filePath: "d.ts", content }),
        state: { status: "running", input: { filePath: "d.ts", content } },
      },
    ]),
  ]

  it("given a completed call, then PartCompacted names the input and what clearing it sheds; again adds nothing", () => {
    given(...events)
      .when({ _tag: "Prune", at: 9, parts: [target("w1")] })
      .then({
        _tag: "PartCompacted",
        at: 9,
        messageId: msg("msg_a1"),
        partId: prt("prt_w1"),
        tokens: Render.inputShed({ filePath: "a.ts", content }),
        rule: "superseded-writes",
        reason: "why",
        target: "input",
      })
  })

  it("given an errored call, then its input is cleared too", () => {
    given(...events)
      .when({ _tag: "Prune", at: 9, parts: [target("w2")] })
      .thenMatch((emitted) => expect(emitted.map((e) => e._tag === "PartCompacted" && e.target)).toEqual(["input"]))
  })

  it("given an input with nothing to clear, a running call, or an unknown part, then nothing", () => {
    given(...events)
      .when({ _tag: "Prune", at: 9, parts: [target("w3"), target("w4"), target("zz")] })
      .thenNothing()
  })

  it("given one part named for its output and for its input, then both are cleared, each once", () => {
    given(...events)
      .when({ _tag: "Prune", at: 9, parts: [target("w1"), target("w1", {}), target("w1")] })
      .thenMatch((emitted) =>
        expect(emitted.map((e) => e._tag === "PartCompacted" && (e.target ?? "output"))).toEqual(["input", "output"]),
      )
  })

  it("given a cleared input, then the window shows the placeholder in the call, the output untouched", () => {
    const state = given(...events)
      .when({ _tag: "Prune", at: 9, parts: [target("w1")] })
      .thenMatch(() => {})
    const message = Session.message(state, msg("msg_a1"))!
    const rendered = Render.toModelMessages([message], { recallIds: true })
    const call = rendered[0]!.content[0]
    expect(call).toMatchObject({
      type: "tool-call",
      input: { filePath: "a.ts", content: Render.clearedInputText("prt_w1-input") },
    })
    expect(rendered[1]!.content[0]).toMatchObject({ output: { type: "text", value: "Wrote file successfully." } })
    // Without recall ids, the bare placeholder.
    expect(JSON.stringify(Render.toModelMessages([message]))).toContain(`"content":"${Render.INPUT_CLEARED_TEXT}"`)
    // The stored input is kept: the conversation still holds it.
    const part = message.role === "assistant" ? message.parts[0] : undefined
    expect(part?.type === "tool" && part.state.input.content).toBe(content)
  })

  it("given a cleared input, then Tail.sizeOf falls by the tokens the event recorded (±1 for rounding)", () => {
    const before = Session.fold(events)
    const cleared = given(...events)
      .when({ _tag: "Prune", at: 9, parts: [target("w1")] })
      .thenMatch(() => {})
    const size = (s: Session.State) => Tail.sizeOf([Session.message(s, msg("msg_a1"))!])
    const shed = Render.inputShed({ filePath: "a.ts", content })
    expect(Math.abs(size(before) - size(cleared) - shed)).toBeLessThanOrEqual(1)
  })
})

describe("Conversation and Recall with cleared inputs", () => {
  const content = "export const a = 1\n".repeat(60)
  const input = { content, filePath: "src/a.ts" }
  const base = [started(), user("u1", "go"), assistant("a1", "u1", [write("w1", input)])]
  const cleared = (t: "input" | undefined, at: number) =>
    ({
      _tag: "PartCompacted",
      at,
      messageId: msg("msg_a1"),
      partId: prt("prt_w1"),
      tokens: 1,
      ...(t === undefined ? {} : { target: t }),
    }) as const

  it("an input clearing and an output clearing mark the part independently", () => {
    const state = Window.fold([...base, cleared("input", 5), cleared(undefined, 6)])
    const part = Conversation.get(state.conversation, msg("msg_a1"))
    const tool = part?.role === "assistant" ? part.parts[0] : undefined
    expect(tool?.type === "tool" && tool.state).toMatchObject({ inputClearedAt: 5, compactedAt: 6 })
    const onlyInput = Window.fold([...base, cleared("input", 5)])
    const m = Conversation.get(onlyInput.conversation, msg("msg_a1"))
    const t = m?.role === "assistant" ? m.parts[0] : undefined
    expect(t?.type === "tool" && t.state.status === "completed" && t.state.compactedAt).toBeUndefined()
  })

  it("the cleared input is a recall document whose text is the stored input as JSON, byte for byte", () => {
    const state = Window.fold([...base, cleared("input", 5)])
    const docs = Recall.documents(Conversation.messages(state.conversation))
    expect(docs).toEqual([
      { id: "prt_w1-input", kind: "input", messageId: "msg_a1", tool: "write", text: JSON.stringify(input) },
    ])
    expect(JSON.parse(docs[0]!.text)).toEqual(input)
    // Searchable like any document, its hit naming it as an input.
    const hits = Recall.search(docs, "export const")
    expect(Recall.answerHits("export const", hits)).toContain("id prt_w1-input (input of write,")
    // Both cleared: the input's document, then the output's.
    const both = Window.fold([...base, cleared("input", 5), cleared(undefined, 6)])
    expect(Recall.documents(Conversation.messages(both.conversation)).map((d) => d.id)).toEqual([
      "prt_w1-input",
      "prt_w1",
    ])
  })
})

describe("the ledger with a cleared input", () => {
  it("records a prune entry whose tokens shed are what the input clearing removed from the window (±1 rounding)", () => {
    const content = "line of the written file\n".repeat(200)
    const input = { filePath: "a.ts", content }
    const events = [
      started(),
      user("u1", "go"),
      assistant("a1", "u1", [write("w1", input)]),
      {
        _tag: "PartCompacted",
        at: 5,
        messageId: msg("msg_a1"),
        partId: prt("prt_w1"),
        tokens: Render.inputShed(input),
        rule: "superseded-writes",
        reason: "test",
        target: "input",
      } as const,
    ]
    const entries = Ledger.entries(Ledger.settle(Ledger.fold(events)))
    expect(entries.map((e) => [e.kind, e.parts])).toEqual([["prune", 1]])
    expect(Math.abs(entries[0]!.shed - Render.inputShed(input))).toBeLessThanOrEqual(1)
    expect(entries[0]!.shed).toBeGreaterThan(1_000)
  })
})
