/**
 * `ContextManager.recall` end to end on the memory store (a scan) and a real SQLite file (FTS5): the placeholder names
 * the id, the id gives back the original byte for byte within the bound, a query returns ranked ids, bad input writes
 * nothing, misses are recorded, redacted secrets never come back, a recalled output is pruned later like any other,
 * and replaying the log gives the same model input byte for byte.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { type Events, Render, Window } from "@pivot/core"
import type { ContextManager, Sessions } from "@pivot/runtime"
import { type EventStore, ReadModels, Replay, SessionLog } from "@pivot/store"
import { Effect, type Layer } from "effect"
import fc from "fast-check"
import { afterAll, describe, expect, it } from "vitest"
import { layer, SESSION, services, stub, tool, used } from "./support/harness.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-recall-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const PRUNE = { config: { prune: true }, prune: { protect: 10, minimum: 10 } } as const

// Bytes that a careless copy would change: CRLF, tabs, trailing spaces, a surrogate pair, a NUL, JSON-looking text.
const ORIGINAL = `line one\r\n\tindented  \nemoji 😀 and é\u0000 {"json": "ish"}\n${"config value 42\n".repeat(60)}`
const SECOND = `npm test\nFAIL the config loader test: port 8080 refused\n${"stack frame\n".repeat(40)}`

type Services = ContextManager | Sessions.Sessions | EventStore

const stores: ReadonlyArray<
  readonly [string, () => Layer.Layer<EventStore | ReadModels.ReadModels, unknown> | undefined]
> = [
  ["memory (scan)", () => undefined],
  [
    "a real SQLite file (FTS5)",
    () => ReadModels.layerSqlite({ filename: path.join(dir, `${Math.random().toString(36).slice(2)}.db`) }),
  ],
]

const runWith = <A, E>(
  program: Effect.Effect<A, E, Services>,
  options: Record<string, unknown>,
  store: Layer.Layer<EventStore | ReadModels.ReadModels, unknown> | undefined,
): Promise<A> =>
  Effect.runPromise(
    program.pipe(
      Effect.provide(
        layer({
          options: { ...PRUNE, ...options },
          summarizer: stub("summary: we fixed the config loader"),
          ...(store === undefined ? {} : { store }),
        }),
      ),
    ) as Effect.Effect<A, never>,
  )

/** Three turns after a first one whose outputs are big: a prune clears the first turn's outputs. */
const scenario = (outputs: ReadonlyArray<string> = [ORIGINAL, SECOND]) =>
  Effect.gen(function* () {
    const { cm } = yield* services
    yield* cm.recordUserMessage(SESSION, { text: "fix the config loader" })
    yield* cm.recordAssistantStep(SESSION, {
      parts: outputs.map((output, i) => tool(i === 0 ? "read" : "bash", { n: i }, output)),
      usage: used(2_000),
      finish: "tool-calls",
    })
    for (const n of [1, 2, 3]) {
      yield* cm.recordUserMessage(SESSION, { text: `turn ${n}` })
      yield* cm.recordAssistantStep(SESSION, {
        parts: [tool("bash", { step: n }, "ok")],
        usage: used(2_000 + n),
        finish: "stop",
      })
    }
    const pruned = yield* cm.prune(SESSION)
    const prepared = yield* cm.prepare(SESSION)
    return { pruned, prepared }
  })

/** The tool-result texts of a model input. */
const toolTexts = (messages: ReadonlyArray<{ readonly role: string; readonly content: unknown }>): Array<string> =>
  messages.flatMap((m) =>
    m.role === "tool"
      ? (m.content as ReadonlyArray<{ readonly output: { readonly type: string; readonly value: unknown } }>).flatMap(
          (p) => (p.output.type === "text" ? [String(p.output.value)] : []),
        )
      : [],
  )

// What every answer to bad input ends with: how to call the tool.
const HINT =
  'Pass {"id": "prt_…"} (from a placeholder, a search result or a pivot\'s list), {"query": "words to search for"}, or {"pivot": 2} (none: the latest) to list what a pivot summarised.'

const recalledEvents = (events: ReadonlyArray<Events.Event>) =>
  events.filter((e): e is Extract<Events.Event, { _tag: "ContextRecalled" }> => e._tag === "ContextRecalled")

const logOf = Effect.map(SessionLog.read(SESSION), (log) => log.map((l) => l.event))

describe.each(stores)("recall on %s", (_, makeStore) => {
  it("given recall on, then the placeholder names the id, and recall by it gives back the original byte for byte, recorded", async () => {
    const out = await runWith(
      Effect.gen(function* () {
        const { cm } = yield* services
        const { pruned, prepared } = yield* scenario()
        const ids = toolTexts(prepared.modelMessages).flatMap((t) => {
          const id = Render.recallIdOf(t)
          return id === undefined ? [] : [id]
        })
        const recalled = yield* Effect.forEach(ids, (id) => cm.recall(SESSION, { id }))
        return { pruned, ids, recalled, log: yield* logOf }
      }),
      { recall: true },
      makeStore(),
    )
    expect(out.pruned.parts).toBe(2)
    expect(out.ids).toHaveLength(2)
    expect(out.recalled.map((r) => r.text)).toEqual([ORIGINAL, SECOND])
    expect(Buffer.from(out.recalled[0]!.text, "utf8").equals(Buffer.from(ORIGINAL, "utf8"))).toBe(true)
    expect(out.recalled.map((r) => [r.truncated, r.recorded, r.found])).toEqual([
      [false, true, [out.ids[0]]],
      [false, true, [out.ids[1]]],
    ])
    expect(recalledEvents(out.log).map(({ at: _at, ...rest }) => rest)).toEqual([
      { _tag: "ContextRecalled", id: out.ids[0], found: [out.ids[0]], chars: ORIGINAL.length, truncated: false },
      { _tag: "ContextRecalled", id: out.ids[1], found: [out.ids[1]], chars: SECOND.length, truncated: false },
    ])
  })

  it("given recall off, then the placeholder is OpenCode's exact text", async () => {
    const { prepared } = await runWith(scenario(), {}, makeStore())
    const texts = toolTexts(prepared.modelMessages)
    expect(texts.filter((t) => t === "[Old tool result content cleared]")).toHaveLength(2)
    expect(texts.some((t) => t.includes("recall id"))).toBe(false)
  })

  it("given a bound, then a long original is cut with a note, and reading on with the offsets gives it back whole", async () => {
    const out = await runWith(
      Effect.gen(function* () {
        const { cm } = yield* services
        const { prepared } = yield* scenario()
        const id = toolTexts(prepared.modelMessages)
          .map(Render.recallIdOf)
          .find((x) => x !== undefined)!
        const pages: Array<string> = []
        let offset = 0
        let first: { readonly text: string; readonly truncated: boolean } | undefined
        for (;;) {
          const page = yield* cm.recall(SESSION, { id, offset })
          first ??= page
          const match =
            /\n\[Recall truncated: showed characters up to (\d+) of (\d+); call context_recall with id \S+ and offset (\d+) for more\]$/.exec(
              page.text,
            )
          if (match === null) {
            pages.push(page.text)
            break
          }
          pages.push(page.text.slice(0, match.index))
          offset = Number(match[3])
        }
        return { first: first!, pages, log: yield* logOf }
      }),
      { recall: { maxChars: 100 } },
      makeStore(),
    )
    expect(out.first.truncated).toBe(true)
    expect(out.pages.join("")).toBe(ORIGINAL)
    expect(out.pages.every((p) => p.length <= 100)).toBe(true)
    expect(out.pages.length).toBe(Math.ceil(ORIGINAL.length / 100))
    const events = recalledEvents(out.log)
    expect(events.map((e) => e.truncated)).toEqual([...out.pages.slice(0, -1).map(() => true), false])
    expect(events.slice(1).every((e) => e.offset !== undefined && e.offset > 0)).toBe(true)
  })

  it("given a bound, then a query's answer keeps the best hits that fit whole and says how many were left out", async () => {
    const out = await runWith(
      Effect.gen(function* () {
        const { cm } = yield* services
        yield* scenario()
        return yield* cm.recall(SESSION, { query: "config" })
      }),
      { recall: { maxChars: 400 } },
      makeStore(),
    )
    expect(out.truncated).toBe(true)
    expect(out.found).toHaveLength(1)
    expect(out.text.length).toBeLessThanOrEqual(400)
    expect(out.text.split("\n")[0]).toBe(
      '1 match for "config", best first (pass an id to context_recall for the full text):',
    )
    expect(out.text.endsWith("\n[1 more match left out at the size bound]")).toBe(true)
  })

  it("given a query, then the matching pruned outputs and summaries come back ranked with their ids", async () => {
    const out = await runWith(
      Effect.gen(function* () {
        const { cm } = yield* services
        const { prepared } = yield* scenario()
        const ids = toolTexts(prepared.modelMessages).flatMap((t) => Render.recallIdOf(t) ?? [])
        yield* cm.compact(SESSION)
        return {
          ids,
          config: yield* cm.recall(SESSION, { query: "config" }),
          port: yield* cm.recall(SESSION, { query: "PORT refused" }),
          summary: yield* cm.recall(SESSION, { query: "summary loader" }),
          none: yield* cm.recall(SESSION, { query: "kubernetes" }),
          log: yield* logOf,
        }
      }),
      { recall: true },
      makeStore(),
    )
    const [first, second] = out.ids
    const summaryId = out.summary.found[0]
    // The first user message ("fix the config loader") fell behind the pivot: it is found, and names the pivot.
    const userPart = /id (prt_\w+) \(user text, behind pivot #1, 21 chars\): fix the config loader/.exec(
      out.config.text,
    )?.[1]
    expect(userPart).toBeDefined()
    // The summary mentions the config loader once in a few words: between the long output and the one mention.
    expect(out.config.found).toEqual([first, userPart, summaryId, second])
    expect(out.config.text).toContain(`1. id ${first} (output of read,`)
    expect(out.port.found).toEqual([second])
    expect(summaryId).toMatch(/^msg_/)
    expect(out.summary.found.slice(1)).toEqual([userPart, second])
    expect(out.none).toEqual({
      text: 'Nothing before a pivot, no pruned output and no earlier summary matches "kubernetes".',
      found: [],
      truncated: false,
      recorded: true,
    })
    expect(recalledEvents(out.log).map((e) => [e.query, e.found])).toEqual([
      ["config", [first, userPart, summaryId, second]],
      ["PORT refused", [second]],
      ["summary loader", out.summary.found],
      ["kubernetes", []],
    ])
  })

  it("given bad input, then a clear tool result and nothing written; an unknown id is a recorded miss", async () => {
    const out = await runWith(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        yield* scenario()
        const before = (yield* sessions.load(SESSION)).session.version
        const bad = yield* Effect.forEach(
          [
            { pivot: -1 },
            { id: "../etc/passwd" },
            { id: "ses_test" },
            { query: "  ?! " },
            { id: "prt_1", offset: -1 },
            { id: "prt_1", offset: 1.5 },
          ],
          (request) => cm.recall(SESSION, request),
        )
        const after = (yield* sessions.load(SESSION)).session.version
        const unknown = yield* cm.recall(SESSION, { id: "prt_doesnotexist" })
        const notStarted = yield* cm.recall("ses_other", { id: "prt_doesnotexist" })
        return {
          before,
          after,
          bad,
          unknown,
          notStarted,
          log: yield* logOf,
          other: yield* (yield* services).sessions.load("ses_other"),
        }
      }),
      { recall: true },
      makeStore(),
    )
    expect(out.after).toBe(out.before)
    expect(out.bad.map((r) => r.text)).toEqual([
      `Invalid context_recall input: pivot -1 is not a whole number ≥ 0. ${HINT}`,
      `Invalid context_recall input: "../etc/passwd" is not a recall id. ${HINT}`,
      `Invalid context_recall input: "ses_test" is not a recall id. ${HINT}`,
      `Invalid context_recall input: the query has no word to search for. ${HINT}`,
      `Invalid context_recall input: offset -1 is not a whole number ≥ 0. ${HINT}`,
      `Invalid context_recall input: offset 1.5 is not a whole number ≥ 0. ${HINT}`,
    ])
    expect(out.bad.every((r) => !r.recorded && r.found.length === 0)).toBe(true)
    expect(out.unknown.text).toContain("Nothing recallable has id prt_doesnotexist")
    expect(out.unknown.recorded).toBe(true)
    expect(recalledEvents(out.log).map((e) => [e.id, e.found])).toEqual([["prt_doesnotexist", []]])
    expect(out.notStarted.recorded).toBe(false)
    expect(out.other.session.version).toBe(0)
  })

  it("given a recalled output in the window, then a later prune clears it like any other; replay gives the same input byte for byte", async () => {
    const out = await runWith(
      Effect.gen(function* () {
        const { cm } = yield* services
        const { prepared } = yield* scenario()
        const id = toolTexts(prepared.modelMessages).flatMap((t) => Render.recallIdOf(t) ?? [])[0]!
        const recalled = yield* cm.recall(SESSION, { id })
        // The model's step that called the tool, with the tool's answer as its result.
        yield* cm.recordUserMessage(SESSION, { text: "what did the file say?" })
        yield* cm.recordAssistantStep(SESSION, {
          parts: [tool("context_recall", { id }, recalled.text)],
          usage: used(3_000),
          finish: "tool-calls",
        })
        const withRecall = yield* cm.prepare(SESSION)
        for (const n of [4, 5, 6]) {
          yield* cm.recordUserMessage(SESSION, { text: `turn ${n}` })
          yield* cm.recordAssistantStep(SESSION, {
            parts: [tool("bash", { step: n }, "ok")],
            usage: used(3_000 + n),
            finish: "stop",
          })
        }
        const pruned = yield* cm.prune(SESSION)
        const last = yield* cm.prepare(SESSION)
        const log = yield* SessionLog.read(SESSION)
        const head = log.at(-1)!.meta.version
        const replayed = Window.render(yield* Replay.windowAt(SESSION, head), { recallIds: true })
        const folded = Window.render(Window.fold(log.map((l) => l.event)), { recallIds: true })
        return { id, recalled, withRecall, pruned, last, replayed, folded }
      }),
      { recall: true },
      makeStore(),
    )
    expect(toolTexts(out.withRecall.modelMessages)).toContain(ORIGINAL)
    expect(out.pruned.parts).toBeGreaterThanOrEqual(1)
    const lastTexts = toolTexts(out.last.modelMessages)
    expect(lastTexts).not.toContain(ORIGINAL)
    expect(lastTexts.filter((t) => Render.recallIdOf(t) !== undefined).length).toBeGreaterThanOrEqual(3)
    expect(JSON.stringify(out.replayed.map((r) => r.message))).toBe(JSON.stringify(out.last.modelMessages))
    expect(JSON.stringify(out.folded.map((r) => r.message))).toBe(JSON.stringify(out.last.modelMessages))
  })
})

describe("recall never gives back what redaction removed", () => {
  it("given record-time redaction, then a recalled output and a search carry the marker, never the secret", async () => {
    const secret = "sk-proj-Abc123Def456Ghi789Jkl012Mno345Pqr678Stu901"
    const out = await runWith(
      Effect.gen(function* () {
        const { cm } = yield* services
        const { prepared } = yield* scenario([`OPENAI_API_KEY=${secret}\n${"config line\n".repeat(80)}`, SECOND])
        const id = toolTexts(prepared.modelMessages).flatMap((t) => Render.recallIdOf(t) ?? [])[0]!
        return {
          byId: yield* cm.recall(SESSION, { id }),
          byQuery: yield* cm.recall(SESSION, { query: secret }),
          log: yield* logOf,
        }
      }),
      { recall: true, redactOnRecord: true },
      ReadModels.layerSqlite({ filename: path.join(dir, "redacted.db") }),
    )
    expect(out.byId.text).toContain("[REDACTED:")
    expect(out.byId.text).not.toContain(secret)
    // The secret was never stored, so nothing matches it (the answer only echoes the model's own query).
    expect(out.byQuery.found).toEqual([])
    expect(out.byQuery.text).toBe(
      `Nothing before a pivot, no pruned output and no earlier summary matches "${secret}".`,
    )
    expect(JSON.stringify(out.log)).not.toContain(secret) // the query too was redacted before it was recorded
  })
})

describe("property", () => {
  it("recall of any pruned part returns its original exactly, within any bound", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.string({ unit: "binary", minLength: 1, maxLength: 300 }), { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 1, max: 400 }),
        async (tails, maxChars) => {
          // The oldest output is big enough that a prune always clears something.
          const outputs = tails.map((t, i) => (i === 0 ? `${"x".repeat(80)}${t}` : t))
          const out = await runWith(
            Effect.gen(function* () {
              const { cm } = yield* services
              yield* scenario(outputs)
              const log = yield* logOf
              const prunedIds = log.flatMap((e) => (e._tag === "PartCompacted" ? [e.partId] : []))
              const answers = yield* Effect.forEach(prunedIds, (id) => cm.recall(SESSION, { id }))
              // What was recorded for each part, read from the log (the reference the answers must equal).
              const recorded = new Map<string, string>()
              for (const e of log)
                if (e._tag === "AssistantStepRecorded")
                  for (const p of e.message.parts)
                    if (p.type === "tool" && p.state.status === "completed") recorded.set(p.id, p.state.output)
              const originals = prunedIds.map((id) => recorded.get(id)!)
              return { prunedIds, answers, originals }
            }),
            { recall: { maxChars } },
            undefined,
          )
          expect(out.prunedIds.length).toBeGreaterThan(0)
          expect(out.originals.every((o) => outputs.includes(o))).toBe(true)
          for (const [i, answer] of out.answers.entries()) {
            const original = out.originals[i]!
            // A single code point shows whole at any bound (half a pair is not text), so nothing was left out.
            if (original.length <= maxChars || [...original].length === 1) expect(answer.text).toBe(original)
            else {
              expect(answer.truncated).toBe(true)
              const shown = answer.text.slice(0, answer.text.lastIndexOf("\n[Recall truncated: "))
              expect(original.startsWith(shown)).toBe(true)
              // Cut on a grapheme boundary (issue 18): as many whole characters as fit, by a whole segmentation.
              const cuts = [0]
              for (const g of new Intl.Segmenter("en", { granularity: "grapheme" }).segment(original))
                cuts.push(g.index + g.segment.length)
              // (a bound of one unit still shows one whole code point: half a pair is not text)
              expect(shown.length <= maxChars || [...shown].length === 1).toBe(true)
              if (cuts.includes(shown.length) && shown.length > 0)
                expect(cuts.find((c) => c > shown.length)).toBeGreaterThan(maxChars)
            }
          }
        },
      ),
      // The example a CI run found: outputs of one surrogate pair recalled at a bound of one unit.
      { numRuns: 40, examples: [[["\u0000", "𐀀", "𐀀𐀀𐀀𐀀𐀀", "\u0000𐀀𐀀𐀀𐀀\u0000𐀀𐀀𐀀𐀀𐀀𐀀"], 1]] },
    )
  })
})
