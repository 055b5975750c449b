// The recall index's cases, run on each backend: by Recall.int.test.ts (SQLite, the fast lane) and
// Recall.postgres.slow.test.ts (PostgreSQL, the slow lane).
import { Conversation, type Events, Ids, type Message, Recall, Tokens, Window } from "@pivot/core"
import { Effect, type ManagedRuntime } from "effect"
import { expect, it } from "vitest"
import { ReadModels, SessionLog } from "../../src/index.ts"
import { freshSession, type Stores } from "./support.ts"

const MODEL = { providerId: "anthropic", modelId: "claude-test" } as const
const msg = Ids.unsafe.message
const prt = Ids.unsafe.part

const completed = (id: string, tool: string, output: string): Message.ToolPart => ({
  type: "tool",
  id: prt(id),
  callId: `call_${id}`,
  tool,
  state: { status: "completed", input: {}, output },
})

// Outputs written so every backend agrees on the order: a short one repeating the words, a medium one with each
// once, a long one with one of them once.
const OUTPUTS = {
  prt_a1_0: ["read", "config port config config config"],
  prt_a1_1: ["bash", "FAIL the config test: expected port 8080 but the server listened elsewhere"],
  prt_a1_2: ["grep", `${"unrelated words about a build log and its many lines ".repeat(6)} config mentioned once`],
  prt_a1_3: ["bash", "nothing to see here"],
} as const

// Chinese, Japanese and Korean outputs: words inside unbroken runs, which a word index holds as one token.
const CJK_OUTPUTS = {
  prt_a1_0: ["bash", "错误：数据库连接失败，请重试。数据库连接超时"],
  prt_a1_1: ["read", "ファイルを読み込みました。データベース接続エラー"],
  prt_a1_2: ["bash", "데이터베이스에 연결할 수 없습니다 error"],
  prt_a1_3: ["grep", "连接 is a word here, 连接 again"],
} as const

export const eventsOf = (
  sessionId: string,
  outputs: { readonly [id: string]: readonly [string, string] } = OUTPUTS,
  prunedIds: ReadonlyArray<string> = ["prt_a1_0", "prt_a1_1", "prt_a1_2"],
): Array<Events.Event> => {
  const a1: Message.AssistantMessage = {
    role: "assistant",
    id: msg("msg_a1"),
    parentId: msg("msg_u1"),
    createdAt: 2,
    model: MODEL,
    tokens: Tokens.zero,
    finish: "tool-calls",
    parts: Object.entries(outputs).map(([id, [tool, output]]) => completed(id, tool, output)),
  }
  const summary: Message.AssistantMessage = {
    role: "assistant",
    id: msg("msg_s1"),
    parentId: msg("msg_m1"),
    createdAt: 9,
    model: MODEL,
    tokens: Tokens.zero,
    finish: "stop",
    summary: true,
    mode: "compaction",
    parts: [{ type: "text", id: prt("prt_s1_0"), text: "We changed the server port and the deploy script." }],
  }
  return [
    { _tag: "SessionStarted", sessionId: sessionId as Ids.SessionId, at: 0, model: MODEL },
    {
      _tag: "UserMessageAdded",
      at: 1,
      message: {
        role: "user",
        id: msg("msg_u1"),
        createdAt: 1,
        parts: [{ type: "text", id: prt("prt_u1_0"), text: "fix the config" }],
      },
    },
    { _tag: "AssistantStepRecorded", at: 2, message: a1 },
    ...prunedIds.map(
      (partId): Events.Event => ({
        _tag: "PartCompacted",
        at: 3,
        messageId: msg("msg_a1"),
        partId: prt(partId),
        tokens: 10,
      }),
    ),
    {
      _tag: "CompactionRequested",
      at: 4,
      marker: {
        role: "user",
        id: msg("msg_m1"),
        createdAt: 4,
        parts: [{ type: "compaction", id: prt("prt_m1_0"), auto: false }],
      },
    },
    { _tag: "SummaryFinished", at: 9, markerId: msg("msg_m1"), summary },
  ]
}

const append = (sessionId: string, events: ReadonlyArray<Events.Event> = eventsOf(sessionId)) =>
  SessionLog.append(
    sessionId,
    0,
    events.map((event, i) => ({ id: SessionLog.eventId(sessionId, i + 1), event })),
  )

/** The scan over the same documents: core's reference for which documents match. */
const scan = (sessionId: string, query: string, events: ReadonlyArray<Events.Event> = eventsOf(sessionId)) =>
  Recall.search(Recall.documents(Conversation.messages(Window.fold(events).conversation)), query, 10).map((h) => h.id)

const CJK_PRUNED = ["prt_a1_0", "prt_a1_1", "prt_a1_2", "prt_a1_3"]

export const searches = (store: () => ManagedRuntime.ManagedRuntime<Stores, unknown>) => {
  it("given pruned outputs and a summary, then a query returns the expected ids ranked, as the scan does", async () => {
    const sessionId = freshSession("recall")
    const other = freshSession("other")
    const found = await store().runPromise(
      Effect.gen(function* () {
        yield* append(sessionId)
        yield* append(other) // the same words in another session never leak into this one's results
        const readModels = yield* ReadModels.ReadModels
        const ids = (query: string, limit = 10) =>
          Effect.map(readModels.recall(sessionId, query, limit), (docs) => docs.map((d) => d.id))
        return {
          config: yield* ids("config"),
          configPort: yield* ids("Config PORT"),
          limited: yield* ids("config", 2),
          port: yield* ids("port"),
          none: yield* ids("kubernetes"),
          visible: yield* ids("nothing"),
          syntax: yield* ids('config" OR NEAR( * :port'),
          docs: yield* readModels.recall(sessionId, "deploy", 10),
        }
      }),
    )
    expect(found.config).toEqual(["prt_a1_0", "prt_a1_1", "prt_a1_2"])
    expect(found.config).toEqual(scan(sessionId, "config"))
    expect(found.configPort).toEqual(["prt_a1_0", "prt_a1_1", "msg_s1", "prt_a1_2"])
    expect(found.configPort).toEqual(scan(sessionId, "config port"))
    expect(found.limited).toEqual(["prt_a1_0", "prt_a1_1"])
    expect(new Set(found.port)).toEqual(new Set(["prt_a1_0", "prt_a1_1", "msg_s1"]))
    expect(found.none).toEqual([])
    expect(found.visible).toEqual([]) // prt_a1_3 is not pruned: not recallable
    expect(found.syntax).toEqual(found.configPort)
    expect(found.docs).toEqual([
      {
        id: "msg_s1",
        kind: "summary",
        messageId: "msg_s1",
        text: "We changed the server port and the deploy script.",
      },
    ])
  })

  it("given CJK outputs, then a word inside an unbroken run is found, in the scan's order (issue 18)", async () => {
    const sessionId = freshSession("cjk")
    const events = eventsOf(sessionId, CJK_OUTPUTS, CJK_PRUNED)
    const queries = [
      "连接",
      "数据库连接",
      "接続",
      "데이터베이스",
      "error",
      "連接",
      "连接 error",
      "config 接続",
      "数据库Error",
    ]
    const found = await store().runPromise(
      Effect.gen(function* () {
        yield* append(sessionId, events)
        const readModels = yield* ReadModels.ReadModels
        const out: Record<string, ReadonlyArray<string>> = {}
        for (const q of queries) out[q] = (yield* readModels.recall(sessionId, q, 10)).map((d) => d.id)
        out.limited = (yield* readModels.recall(sessionId, "连接", 1)).map((d) => d.id)
        return out
      }),
    )
    expect(found.连接).toEqual(["prt_a1_0", "prt_a1_3"])
    expect(found.数据库连接).toEqual(["prt_a1_0"])
    expect(found.接続).toEqual(["prt_a1_1"])
    expect(found.데이터베이스).toEqual(["prt_a1_2"])
    expect(found.error).toEqual(["prt_a1_2"])
    expect(found.連接).toEqual([]) // traditional characters are other characters
    expect(found.limited).toEqual(["prt_a1_0"])
    for (const q of queries) expect(found[q], q).toEqual(scan(sessionId, q, events))
  })

  it("given a cleared tool input (ADR 0030), then it is found as a document of kind input, as the scan finds it", async () => {
    const sessionId = freshSession("input")
    const input = { filePath: "notes.md", content: "quarterly figures for the board meeting\n".repeat(8) }
    const events: Array<Events.Event> = [
      ...eventsOf(sessionId).slice(0, 2),
      {
        _tag: "AssistantStepRecorded",
        at: 2,
        message: {
          role: "assistant",
          id: msg("msg_a1"),
          parentId: msg("msg_u1"),
          createdAt: 2,
          model: MODEL,
          tokens: Tokens.zero,
          finish: "tool-calls",
          parts: [
            {
              type: "tool",
              id: prt("prt_w1"),
              callId: "call_w1",
              tool: "write",
              state: { status: "completed", input, output: "ok" },
            },
          ],
        },
      },
      {
        _tag: "PartCompacted",
        at: 3,
        messageId: msg("msg_a1"),
        partId: prt("prt_w1"),
        tokens: 70,
        rule: "superseded-writes",
        reason: "test",
        target: "input",
      },
    ]
    const docs = await store().runPromise(
      Effect.gen(function* () {
        yield* append(sessionId, events)
        return yield* (yield* ReadModels.ReadModels).recall(sessionId, "quarterly board", 10)
      }),
    )
    expect(docs).toEqual([
      { id: "prt_w1-input", kind: "input", messageId: "msg_a1", tool: "write", text: JSON.stringify(input) },
    ])
    expect(docs.map((d) => d.id)).toEqual(scan(sessionId, "quarterly board", events))
  })

  it("given a rebuild, then the same query finds the same ids (rebuilt == inline)", async () => {
    const sessionId = freshSession("rebuild")
    const [before, after] = await store().runPromise(
      Effect.gen(function* () {
        yield* append(sessionId)
        const readModels = yield* ReadModels.ReadModels
        const before = yield* readModels.recall(sessionId, "config port", 10)
        const tables = yield* readModels.tables(sessionId)
        yield* readModels.rebuild(sessionId)
        expect((yield* readModels.tables(sessionId)).recall).toEqual(tables.recall)
        return [before, yield* readModels.recall(sessionId, "config port", 10)] as const
      }),
    )
    expect(after).toEqual(before)
    expect(after.length).toBe(4)
  })
}
