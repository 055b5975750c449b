/**
 * docs/context-tools-recall.md shows the model's view of `context_recall`: the tool's description and a sample list
 * of what a pivot dropped. Both are quoted from the code: these tests fail when the doc and the code part.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Ids, type Message, Recall, Tokens } from "@pivot/core"
import { describe, expect, it } from "vitest"

const doc = readFileSync(join(import.meta.dirname, "../../../docs/context-tools-recall.md"), "utf8")

/** The blockquote right after a marker comment, as text (`<br>` and escapes dropped). */
const quoteAfter = (marker: string): string => {
  const at = doc.indexOf(marker)
  expect(at).toBeGreaterThanOrEqual(0)
  const lines = doc.slice(doc.indexOf("\n", at) + 1).split("\n")
  const quote: Array<string> = []
  for (const line of lines) {
    if (!line.startsWith("> ")) break
    quote.push(line.slice(2).replace(/<br>$/, "").replace(/^\\-/, "-"))
  }
  return quote.join("\n")
}

const text = (id: string, body: string): Message.TextPart => ({ type: "text", id: Ids.unsafe.part(id), text: body })
const MODEL = { providerId: "p", modelId: "m" }

describe("docs/context-tools-recall.md", () => {
  it("quotes the tool's description word for word", () => {
    expect(quoteAfter("<!-- description: Recall.TOOL_DESCRIPTION")).toBe(Recall.TOOL_DESCRIPTION)
  })

  it("shows a list of what a pivot dropped exactly as Recall.droppedText writes it (ids elided)", () => {
    const messages: Array<Message.Message> = [
      { role: "user", id: Ids.unsafe.message("msg_1"), createdAt: 1, parts: [text("prt_1", "fix the failing test.")] },
      {
        role: "assistant",
        id: Ids.unsafe.message("msg_2"),
        parentId: Ids.unsafe.message("msg_1"),
        createdAt: 2,
        model: MODEL,
        tokens: Tokens.zero,
        parts: [
          {
            type: "tool",
            id: Ids.unsafe.part("prt_2"),
            callId: "c",
            tool: "read",
            state: {
              status: "completed",
              input: { filePath: "src/answer.test.ts" },
              output: "expect(answer()).toBe(42)",
            },
          },
        ],
      },
      {
        role: "user",
        id: Ids.unsafe.message("msg_3"),
        createdAt: 3,
        parts: [text("prt_3", "and keep the API as is.")],
      },
    ]
    const pivot: Recall.Pivot = {
      number: 1,
      markerId: Ids.unsafe.message("msg_4"),
      summaryId: Ids.unsafe.message("msg_5"),
      head: messages.map((m) => m.id),
    }
    const listed = Recall.droppedText(Recall.dropped(pivot, (id) => messages.find((m) => m.id === id)))
    expect(quoteAfter("<!-- sample: Recall.droppedText")).toBe(listed.replace(/\b(prt|msg)_\d+/g, "$1_…"))
  })
})
