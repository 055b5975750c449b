import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as Recall from "../src/Recall.ts"
import * as Render from "../src/Render.ts"
import * as Text from "../src/Text.ts"
import { assistant, completed, summary, tool, user } from "./support/build.ts"
import { RUNS } from "./support/runs.ts"

/** Text mixing ASCII, emoji (one pair, ZWJ sequences, flags), combining marks, CJK and lone surrogates. */
const textArb = fc.string({
  unit: fc.oneof(
    fc.constantFrom("a", " ", "\n", "😀", "👨‍👩‍👧", "🇫🇷", "e\u0301", "数", "据", "カ", "한", "\ud83d", "\ude00"),
    fc.string({ unit: "binary", maxLength: 1 }),
  ),
  maxLength: 120,
})
const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff
const splitsPair = (text: string, at: number) =>
  at > 0 && at < text.length && isHigh(text.charCodeAt(at - 1)) && isLow(text.charCodeAt(at))
/** Every grapheme boundary of a text, from one segmentation of the whole text (0 and the length included). */
const graphemeCuts = (text: string): Array<number> => {
  const cuts = [0]
  for (const g of new Intl.Segmenter("en", { granularity: "grapheme" }).segment(text))
    cuts.push(g.index + g.segment.length)
  return cuts
}
/** The lone surrogates of a text (code points in the surrogate range that `[...text]` leaves unpaired). */
const lone = (text: string): number =>
  [...text].filter((c) => c.length === 1 && (isHigh(c.charCodeAt(0)) || isLow(c.charCodeAt(0)))).length

const pruned = (name: string, output: string, toolName = "bash") =>
  assistant(name, "u1", [tool(toolName, completed(output, { compactedAt: 1 }))])

const outputOf = (messages: ReturnType<typeof Render.toModelMessages>): string => {
  for (const m of messages)
    if (m.role === "tool") for (const part of m.content) if (part.output.type === "text") return part.output.value
  throw new Error("no tool result")
}

describe("the placeholder of a pruned output (one home: Render.clearedText)", () => {
  it("given recall off (the default), then the placeholder is OpenCode's exact text", () => {
    expect(outputOf(Render.toModelMessages([pruned("a1", "secret plans")]))).toBe("[Old tool result content cleared]")
    expect(outputOf(Render.toModelMessages([pruned("a1", "x")], { recallIds: false }))).toBe(Render.CLEARED_TEXT)
  })

  it("given recall on, then the placeholder names the part id, which recallIdOf reads back", () => {
    const text = outputOf(Render.toModelMessages([pruned("a1", "secret plans")], { recallIds: true }))
    expect(text).toBe("[Old tool result content cleared — recall id: prt_a1_0]")
    expect(Render.recallIdOf(text)).toBe("prt_a1_0")
    expect(Render.isClearedText(text)).toBe(true)
    expect(Render.isClearedText(Render.CLEARED_TEXT)).toBe(true)
    expect(Render.recallIdOf(Render.CLEARED_TEXT)).toBeUndefined()
    expect(Render.isClearedText("[Old tool result content cleared — recall id: ]")).toBe(false)
    expect(Render.isClearedText("secret plans")).toBe(false)
    // Both ends must match, and an id of one character is the shortest there is.
    expect(Render.recallIdOf("[Old tool result content cleared — recall id: prt_x")).toBeUndefined()
    expect(Render.recallIdOf("an output that ends like one]")).toBeUndefined()
    expect(Render.recallIdOf("[Old tool result content cleared — recall id: x]")).toBe("x")
  })

  it("given recall on, then an output that is not pruned renders unchanged", () => {
    const a = assistant("a1", "u1", [tool("bash", completed("kept"))])
    expect(outputOf(Render.toModelMessages([a], { recallIds: true }))).toBe("kept")
  })
})

describe("recallable documents", () => {
  it("are pruned completed outputs (by part id) and finished summaries (by message id); nothing else", () => {
    const messages = [
      user("u1", "hello"),
      assistant("a1", "u1", [
        tool("read", completed("file body", { compactedAt: 5 })),
        tool("bash", completed("still visible")),
      ]),
      summary("s1", "m1", "what we did"),
      summary("s2", "m2", "failed", { error: { name: "UnknownError", message: "boom" } }),
      summary("s3", "m3", "unfinished", { finish: undefined }),
    ]
    expect(Recall.documents(messages)).toEqual([
      { id: "prt_a1_0", kind: "output", messageId: "msg_a1", tool: "read", text: "file body" },
      { id: "msg_s1", kind: "summary", messageId: "msg_s1", text: "what we did" },
    ])
  })

  it("recall ids have the shape prt_… or msg_…", () => {
    expect(["prt_a1_0", "msg_s1", "prt_0000000a0005"].map(Recall.isRecallId)).toEqual([true, true, true])
    expect(["", "prt_", "ses_1", "prt_a b", "PRT_1", `prt_${"x".repeat(65)}`].map(Recall.isRecallId)).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
    ])
  })
})

describe("search (the scan)", () => {
  const docs: Array<Recall.Document> = [
    { id: "prt_1", kind: "output", messageId: "msg_1", tool: "read", text: "The config loader reads config.json" },
    { id: "prt_2", kind: "output", messageId: "msg_2", tool: "bash", text: "npm test: 3 failing tests in loader" },
    { id: "msg_3", kind: "summary", messageId: "msg_3", text: "We fixed the Config loader; config config" },
    { id: "prt_4", kind: "output", messageId: "msg_4", tool: "bash", text: "nothing relevant" },
  ]

  it("terms are the query's words, lowercased, once each, at most MAX_TERMS", () => {
    expect(Recall.terms("Config, config! loader-v2 ü")).toEqual(["config", "loader", "v2", "ü"])
    expect(Recall.terms("  --- !!")).toEqual([])
    const many = Array.from({ length: Recall.MAX_TERMS + 1 }, (_, i) => `w${i}`).join(" ")
    expect(Recall.terms(many)).toHaveLength(Recall.MAX_TERMS)
    expect(Recall.terms(many).at(-1)).toBe(`w${Recall.MAX_TERMS - 1}`)
  })

  it("ranks by matching words damped by length, ties newest id first, and leaves out documents with no match", () => {
    expect(Recall.search(docs, "config").map((h) => h.id)).toEqual(["msg_3", "prt_1"])
    expect(Recall.search(docs, "loader").map((h) => h.id)).toEqual(["prt_1", "prt_2", "msg_3"])
    expect(Recall.search(docs, "config loader").map((h) => h.id)).toEqual(["msg_3", "prt_1", "prt_2"])
    expect(Recall.search(docs, "config loader", 1).map((h) => h.id)).toEqual(["msg_3"])
    // Equal matches: the shorter document first; equal scores: the newer id first.
    const twins = [
      { id: "prt_a", kind: "output" as const, messageId: "msg_a", text: "alpha beta" },
      { id: "prt_b", kind: "output" as const, messageId: "msg_b", text: "alpha beta" },
      { id: "prt_c", kind: "output" as const, messageId: "msg_c", text: "alpha beta gamma" },
    ]
    expect(Recall.search(twins, "alpha").map((h) => h.id)).toEqual(["prt_b", "prt_a", "prt_c"])
    expect(Recall.search(docs, "absent")).toEqual([])
    expect(Recall.search(docs, "?!")).toEqual([])
  })

  it("a hit carries a snippet around its first match and the size of the whole document", () => {
    const long = {
      id: "prt_9",
      kind: "output" as const,
      messageId: "msg_9",
      text: `${"a ".repeat(200)}needle${" b".repeat(200)}`,
    }
    const [hit] = Recall.search([long], "needle")
    expect(hit?.snippet).toContain("needle")
    expect(hit?.snippet.startsWith("…")).toBe(true)
    expect(hit?.snippet.endsWith("…")).toBe(true)
    expect(hit?.snippet.length).toBeLessThanOrEqual(Recall.SNIPPET_CHARS + 2)
    expect(hit?.chars).toBe(long.text.length)
  })

  it("within a bound: all hits at the full length, one fewer at length − 1, a plain cut when no hit fits", () => {
    const hits = Recall.search(docs, "loader")
    const full = Recall.answerHits("loader", hits)
    expect(Recall.answerHitsWithin("loader", hits, full.length)).toEqual({
      answer: full,
      shown: hits,
      truncated: false,
    })
    const shorter = Recall.answerHitsWithin("loader", hits, full.length - 1)
    expect(shorter.shown.map((h) => h.id)).toEqual(["prt_1", "prt_2"])
    expect(shorter.truncated).toBe(true)
    expect(shorter.answer.length).toBeLessThanOrEqual(full.length - 1)
    expect(shorter.answer).toBe(
      `${Recall.answerHits("loader", hits.slice(0, 2))}\n[1 more match left out at the size bound]`,
    )
    const tiny = Recall.answerHitsWithin("loader", hits, 20)
    expect(tiny).toEqual({
      answer: `${full.slice(0, 20)}\n[Recall truncated at 20 characters]`,
      shown: [],
      truncated: true,
    })
  })

  it("answers name each hit's id; no hit answers that nothing matched", () => {
    const answer = Recall.answerHits("loader", Recall.search(docs, "loader"))
    expect(answer.split("\n")[0]).toBe(
      '3 matches for "loader", best first (pass an id to context_recall for the full text):',
    )
    expect(answer).toContain("1. id prt_1 (output of read, 35 chars): The config loader reads config.json")
    expect(answer).toContain("2. id prt_2 (output of bash, 35 chars): npm test: 3 failing tests in loader")
    expect(answer).toContain("3. id msg_3 (summary,")
    expect(Recall.answerHits("zzz", [])).toBe(
      'Nothing before a pivot, no pruned output and no earlier summary matches "zzz".',
    )
  })
})

describe("the size bound", () => {
  it("at the bound's edges: max − 1 and max fit whole, max + 1 is cut with a note naming the offset to read on", () => {
    const max = 10
    expect(Recall.answerOriginal("prt_1", "x".repeat(max - 1), max)).toMatchObject({
      truncated: false,
      answer: "x".repeat(9),
    })
    expect(Recall.answerOriginal("prt_1", "x".repeat(max), max)).toMatchObject({
      truncated: false,
      answer: "x".repeat(10),
    })
    const cut = Recall.answerOriginal("prt_1", "x".repeat(max + 1), max)
    expect(cut.truncated).toBe(true)
    expect(cut.text).toBe("x".repeat(max))
    expect(cut.answer).toBe(
      `${"x".repeat(max)}\n[Recall truncated: showed characters up to 10 of 11; call context_recall with id prt_1 and offset 10 for more]`,
    )
    expect(Recall.answerOriginal("prt_1", "x".repeat(max + 1), max, 10)).toMatchObject({
      truncated: false,
      answer: "x",
    })
  })

  it("an offset at the end or past it says where the end is; an empty original comes back empty", () => {
    expect(Recall.answerOriginal("prt_1", "abc", 10, 2)).toMatchObject({ answer: "c", truncated: false })
    expect(Recall.answerOriginal("prt_1", "abc", 10, 3).answer).toBe(
      "[Recall: offset 3 is at or past the end of prt_1, which has 3 characters]",
    )
    expect(Recall.answerOriginal("prt_1", "abc", 10, 4).answer).toBe(
      "[Recall: offset 4 is at or past the end of prt_1, which has 3 characters]",
    )
    expect(Recall.answerOriginal("prt_1", "", 10).answer).toBe("")
  })

  it("never splits a surrogate pair (the slice ends before it instead)", () => {
    expect(Recall.bound("ab😀c", 3)).toEqual({ text: "ab", truncated: true, end: 2 })
    expect(Recall.bound("ab😀c", 4)).toEqual({ text: "ab😀", truncated: true, end: 4 })
    expect(Recall.bound("ab😀c", 3, 2)).toEqual({ text: "😀c", truncated: false, end: 5 })
    // Issue 18: a page of one unit, or an offset inside the pair, still gives whole characters.
    expect(Recall.bound("😀c", 1)).toEqual({ text: "😀", truncated: true, end: 2 })
    expect(Recall.bound("ab😀c", 10, 3)).toEqual({ text: "😀c", truncated: false, end: 5 })
    // A flag (two code points) and a family emoji (seven) are one character each: kept whole or left out whole.
    expect(Recall.bound("a🇫🇷b", 3)).toEqual({ text: "a", truncated: true, end: 1 })
    expect(Recall.bound("👨‍👩‍👧x", 8)).toEqual({ text: "👨‍👩‍👧", truncated: true, end: 8 })
  })

  it("property: paging with the offset each answer names gives back the original exactly, each page within the bound", () => {
    fc.assert(
      fc.property(textArb, fc.integer({ min: 1, max: 20 }), (text, max) => {
        // The reference: boundaries from a whole segmentation of the text. Pages are consecutive and end on a
        // grapheme boundary, hold as many whole graphemes as fit in `max`, and never split a surrogate pair; a
        // grapheme longer than `max` is paged by code points (one code point per page when even that is too long).
        const cuts = graphemeCuts(text)
        const pages: Array<string> = []
        let offset = 0
        while (offset < text.length) {
          const b = Recall.bound(text, max, offset)
          expect(b.text.length).toBeGreaterThan(0)
          expect(b.end).toBe(offset + b.text.length)
          expect(b.truncated).toBe(b.end < text.length)
          expect(splitsPair(text, b.end)).toBe(false)
          const next = cuts.find((c) => c > offset)!
          if (next - offset <= max) {
            expect(cuts).toContain(b.end)
            expect(b.text.length).toBeLessThanOrEqual(max)
            if (b.truncated) expect(cuts.find((c) => c > b.end)! - offset).toBeGreaterThan(max)
          } else {
            // Inside a grapheme longer than the bound: as many code points as fit (at least one).
            expect(b.text.length <= max || [...b.text].length === 1).toBe(true)
            if (b.truncated && max > 1) expect(b.text.length).toBeGreaterThanOrEqual(max - 1)
          }
          pages.push(b.text)
          offset = b.end
        }
        expect(pages.join("")).toBe(text)
        if (text.length <= max) expect(Recall.bound(text, max)).toEqual({ text, truncated: false, end: text.length })
      }),
      RUNS,
    )
  })
})

describe("cuts never split a character (issue 18)", () => {
  it("a surrogate pair is any high half (U+D800–U+DBFF) before any low half (U+DC00–U+DFFF), and nothing else", () => {
    // The edges of both ranges, and the code units just outside them.
    const pairs = ["\ud800\udc00", "\udbff\udfff", "\ud800\udfff", "\udbff\udc00"]
    for (const pair of pairs) {
      expect(Text.codePointBefore(`a${pair}`, 2)).toBe(1)
      expect(Text.codePointAfter(`a${pair}`, 2)).toBe(3)
    }
    const notPairs = ["\ud7ff\udc00", "\udc00\udc00", "\ud800\ue000", "\ud800\udbff", "\udfff\udc00", "ab"]
    for (const text of notPairs) {
      expect(Text.codePointBefore(text, 1)).toBe(1)
      expect(Text.codePointAfter(text, 1)).toBe(1)
    }
    // Clamped to the text.
    expect([Text.codePointBefore("ab", -3), Text.codePointBefore("ab", 9), Text.codePointAfter("ab", 9)]).toEqual([
      0, 2, 2,
    ])
  })

  it("a clip keeps whole graphemes, or code points inside one longer than the bound", () => {
    expect(Text.clip("ab👨‍👩‍👧c", 9)).toBe("ab")
    expect(Text.clip("ab👨‍👩‍👧c", 10)).toBe("ab👨‍👩‍👧")
    expect(Text.clip("👨‍👩‍👧c", 5)).toBe("👨‍👩") // a first grapheme longer than the bound: code points
    expect(Text.clip("😀", 1)).toBe("")
    expect(Text.boundaryBefore("a👨‍👩‍👧", 5)).toBe(1)
    expect(Text.boundaryBefore("a👨‍👩‍👧", 5, 1)).toBe(4) // inside 👩: before it
    expect(Text.boundaryBefore("a👨‍👩‍👧", 3, 1)).toBe(3)
  })

  it("an ellipsis is the last unit of a cut text, and nothing fits in a bound of 0", () => {
    expect(["abc", "abcdef"].flatMap((t) => [0, 1, 2, 3, 4].map((max) => Text.ellipsis(t, max)))).toEqual([
      "",
      "…",
      "a…",
      "abc",
      "abc",
      "",
      "…",
      "a…",
      "ab…",
      "abc…",
    ])
    expect(Text.ellipsis("a😀b", 3)).toBe("a…")
  })

  it("property: a snippet, a page, a focus-sized clip and an ellipsis add no lone surrogate and end on a grapheme boundary", () => {
    fc.assert(
      fc.property(textArb, fc.integer({ min: 0, max: 130 }), fc.integer({ min: 0, max: 130 }), (text, max, offset) => {
        const cuts = graphemeCuts(text)
        const clipped = Text.clip(text, max)
        expect(text.startsWith(clipped)).toBe(true)
        expect(clipped.length).toBeLessThanOrEqual(max)
        expect(lone(clipped)).toBeLessThanOrEqual(lone(text))
        expect(splitsPair(text, clipped.length)).toBe(false)
        // The longest such prefix: whole graphemes up to max (a first grapheme longer than max is cut by code points).
        const fits = cuts.filter((c) => c <= max).at(-1)!
        if (fits > 0 || text.length <= max) expect(clipped.length).toBe(Math.min(text.length, fits))
        const shown = Text.ellipsis(text, max)
        expect(shown.length).toBeLessThanOrEqual(Math.max(max, 0))
        expect(lone(shown)).toBeLessThanOrEqual(lone(text))
        const page = Recall.bound(text, Math.max(1, max), offset)
        expect(lone(page.text)).toBeLessThanOrEqual(lone(text))
        expect(splitsPair(text, page.end)).toBe(false)
        // A snippet around a term at a random place: no lone surrogate beyond those of the text.
        const words = Recall.words(text)
        const term = words[offset % Math.max(1, words.length)]
        const snippet = Recall.snippet(text, term === undefined ? ["x"] : [term])
        expect(lone(snippet)).toBeLessThanOrEqual(lone(text))
        expect(snippet.length).toBeLessThanOrEqual(Recall.SNIPPET_CHARS + 2)
      }),
      RUNS,
    )
  })

  it("a snippet whose window starts or ends inside an emoji keeps it whole or leaves it out whole", () => {
    // The match is at unit 121: the window (40 units before it, 160 in all) would start and end inside an emoji.
    const text = `${"😀".repeat(60)} needle ${"😀".repeat(100)}`
    const snippet = Recall.snippet(text, ["needle"])
    expect(lone(snippet)).toBe(0)
    expect(snippet).toBe(`…${"😀".repeat(20)} needle ${"😀".repeat(56)}…`)
  })
})

describe("CJK text is found inside unbroken runs (issue 18)", () => {
  const docs = [
    { id: "prt_1", kind: "output" as const, messageId: "msg_1", text: "错误：数据库连接失败，请重试" },
    {
      id: "prt_2",
      kind: "output" as const,
      messageId: "msg_2",
      text: "ファイルを読み込みました。データベース接続エラー",
    },
    { id: "prt_3", kind: "output" as const, messageId: "msg_3", text: "데이터베이스에 연결할 수 없습니다 error" },
    { id: "prt_4", kind: "output" as const, messageId: "msg_4", text: "the database connection failed" },
  ]
  it("splits each CJK run of a query into a term of its own, matched as a substring", () => {
    expect(Recall.terms("数据库Error 连接")).toEqual(["数据库", "error", "连接"])
    expect(Recall.termKinds(Recall.terms("数据库Error 连接"))).toEqual({
      words: ["error"],
      substrings: ["数据库", "连接"],
    })
  })
  it("given a word inside an unbroken Chinese, Japanese or Korean run, then search finds it", () => {
    expect(Recall.search(docs, "连接").map((h) => h.id)).toEqual(["prt_1"])
    expect(Recall.search(docs, "接続").map((h) => h.id)).toEqual(["prt_2"])
    expect(Recall.search(docs, "데이터베이스").map((h) => h.id)).toEqual(["prt_3"])
    expect(Recall.search(docs, "error").map((h) => h.id)).toEqual(["prt_3"])
    expect(Recall.search(docs, "数据库连接").map((h) => h.id)).toEqual(["prt_1"])
    expect(Recall.search(docs, "连接").map((h) => h.snippet)).toEqual(["错误：数据库连接失败，请重试"])
  })
  it("property: a CJK substring of a document always finds it, and matches exactly the documents holding it", () => {
    const cjk = fc.string({
      unit: fc.constantFrom("数", "据", "库", "连", "接", "カ", "ー", "한", "글"),
      minLength: 1,
      maxLength: 30,
    })
    fc.assert(
      fc.property(fc.array(cjk, { minLength: 1, maxLength: 6 }), fc.nat(), fc.nat(), (texts, pick, at) => {
        const all = texts.map((text, i) => ({ id: `prt_${i}`, kind: "output" as const, messageId: `msg_${i}`, text }))
        const text = texts[pick % texts.length]!
        const from = at % text.length
        const query = text.slice(from, from + 1 + (at % 3))
        const expected = all.filter((d) => d.text.includes(query)).map((d) => d.id)
        expect(
          Recall.search(all, query, 100)
            .map((h) => h.id)
            .sort(),
        ).toEqual(expected.sort())
      }),
      RUNS,
    )
  })
})
