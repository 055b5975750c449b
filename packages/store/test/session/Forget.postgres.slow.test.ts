// Crypto-shredding on PostgreSQL (the server comes from PIVOT_PG_URL or scripts/postgres.sh, see globalSetup): a
// session written with sealed fields keeps ciphertext in pivot_events and its key in pivot_keys; forget deletes the
// key row and the session's read-model rows, after which every sensitive field reads as erased and the log and the
// recorded decisions are unchanged; a repeated forget records nothing unless text came since (`support/forgetAgain.ts`).
import { execFileSync } from "node:child_process"
import type { Events } from "@pivot/core"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { SAMPLES } from "../../../core/test/support/secrets.ts"
import { ERASED, ReadModels, SessionLog } from "../../src/index.ts"
import { testSchema } from "../support/postgres.ts"
import { forgetAgain } from "./support/forgetAgain.ts"

const { url, setupError, schema } = testSchema("pivot_forget")
const SESSION = "ses_forget_pg"
const ALL = SAMPLES.map((s) => s.text).join("\n")

const psql = (query: string): string =>
  execFileSync("psql", [url, "-tA", "-c", `SET search_path TO ${schema}; ${query}`], { encoding: "utf8" })
    .trim()
    .split("\n")
    .at(-1)!

const events: ReadonlyArray<Events.Event> = [
  { _tag: "SessionStarted", sessionId: SESSION as never, at: 1, title: `about ${ALL}` },
  {
    _tag: "UserMessageAdded",
    at: 2,
    message: {
      role: "user",
      id: "msg_u1" as never,
      createdAt: 2,
      parts: [{ type: "text", id: "prt_u1" as never, text: ALL }],
    },
  },
  {
    _tag: "AssistantStepRecorded",
    at: 3,
    message: {
      role: "assistant",
      id: "msg_a1" as never,
      parentId: "msg_u1" as never,
      createdAt: 3,
      model: { providerId: "p", modelId: "m" },
      tokens: { input: 1234, output: 56, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
      finish: "tool-calls",
      parts: [
        { type: "reasoning", id: "prt_a1" as never, text: ALL },
        {
          type: "tool",
          id: "prt_a2" as never,
          callId: "call_1",
          tool: "bash",
          state: { status: "completed", input: { command: ALL }, output: ALL, title: "bash" },
        },
      ],
    },
  },
]

const layer = () => {
  if (setupError !== "") throw new Error(setupError)
  return ReadModels.layerPostgres({ url, schema, maxConnections: 2 })
}

describe("forget on PostgreSQL", () => {
  it("given a sealed session, when forgotten, then its key row and read-model rows are gone and its fields read as erased", async () => {
    const before = await Effect.runPromise(
      Effect.gen(function* () {
        yield* SessionLog.append(
          SESSION,
          "no-stream",
          SessionLog.fromEvents(SESSION, events).map(({ event, meta }) => ({ id: meta.id, event })),
          { seal: true },
        )
        const readModels = yield* ReadModels.ReadModels
        return { log: yield* SessionLog.read(SESSION), usage: yield* readModels.usage(SESSION) }
      }).pipe(Effect.provide(layer())),
    )
    expect(JSON.stringify(before.log)).toContain(SAMPLES[3]!.secret)
    const stored = psql("SELECT string_agg(data, '') FROM pivot_events")
    expect(SAMPLES.filter((s) => stored.includes(s.secret))).toEqual([])
    expect(psql(`SELECT count(*) FROM pivot_keys WHERE stream = 'session-${SESSION}'`)).toBe("1")
    expect(Number(psql(`SELECT count(*) FROM pivot_rm_window WHERE session_id = '${SESSION}'`))).toBeGreaterThan(0)

    const forgotten = await Effect.runPromise(SessionLog.forget(SESSION).pipe(Effect.provide(layer())))
    expect(forgotten).toEqual({
      keyDeleted: true,
      logCleared: true,
      alreadyForgotten: false,
      version: expect.any(Number),
      forks: [],
      forksAlreadyForgotten: [],
    })
    expect(psql("SELECT count(*) FROM pivot_keys")).toBe("0")
    expect(psql(`SELECT count(*) FROM pivot_rm_window WHERE session_id = '${SESSION}'`)).toBe("0")
    expect(psql(`SELECT count(*) FROM pivot_rm_checkpoints WHERE session_id = '${SESSION}'`)).toBe("0")

    const after = await Effect.runPromise(
      Effect.gen(function* () {
        const readModels = yield* ReadModels.ReadModels
        return {
          log: yield* SessionLog.read(SESSION),
          usage: yield* readModels.usage(SESSION),
          window: yield* readModels.window(SESSION),
        }
      }).pipe(Effect.provide(layer())),
    )
    // Every event stands; the forget appended its marker after them.
    expect(after.log.map((l) => l.meta).slice(0, -1)).toEqual(before.log.map((l) => l.meta))
    expect(after.log.at(-1)?.event._tag).toBe("SessionForgotten")
    expect(after.usage).toEqual(before.usage)
    const json = JSON.stringify(after)
    for (const s of SAMPLES) expect(json).not.toContain(s.secret)
    const step = after.log[2]!.event
    expect(step._tag === "AssistantStepRecorded" && step.message.parts).toEqual([
      { type: "reasoning", id: "prt_a1", text: ERASED },
      {
        type: "tool",
        id: "prt_a2",
        callId: "call_1",
        tool: "bash",
        state: { status: "completed", input: { command: ERASED }, output: ERASED, title: ERASED },
      },
    ])
    expect(after.window.map((m) => m.id)).toEqual(["msg_u1", "msg_a1"])
  })

  it("given a session and its fork forgotten, when forgotten again, then nothing is recorded unless text came since (then it is erased and marked)", () =>
    forgetAgain(layer(), "ses_forget_pg_again"))
})
