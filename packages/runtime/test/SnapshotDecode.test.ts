/**
 * Why a stored snapshot is not used, reason and detail, one check at a time, and the runtime state's own decoding
 * (issue 18, mutation run). `Snapshots.test.ts` checks that a restart then folds the events; these pin the words.
 */
import { Session, StateSnapshot } from "@pivot/core"
import { RuntimeState, Sessions } from "@pivot/runtime"
import { Snapshot, type StoredSnapshot } from "@pivot/store"
import { Result } from "effect"
import { describe, expect, it } from "vitest"

const SESSION = "ses_decode"

const state = (version: number, sessionId: string = SESSION): Sessions.State => ({
  session: { ...Session.initialState, sessionId: sessionId as never, version },
  runtime: { ...RuntimeState.initial, pivots: 2 },
})

/** A stored snapshot of `data` at `version`, its checksum right unless `checksum` says otherwise. */
const stored = (data: string, version: number, extra: Partial<StoredSnapshot> = {}): StoredSnapshot => ({
  stream: `session-${SESSION}`,
  version,
  format: Sessions.SNAPSHOT_FORMAT,
  data,
  checksum: Snapshot.checksum(data),
  recordedAt: 0,
  ...extra,
})

const rejection = (snapshot: StoredSnapshot, format?: string) => {
  const decoded = Sessions.decodeSnapshot(SESSION, snapshot, format)
  if (Result.isSuccess(decoded)) throw new Error("the snapshot was used")
  return decoded.failure
}

describe("Sessions.decodeSnapshot", () => {
  it("a sound snapshot comes back as the state it was written from", () => {
    const decoded = Sessions.decodeSnapshot(SESSION, stored(Sessions.encodeSnapshot(state(5)), 5))
    expect(Result.isSuccess(decoded) && decoded.success.session.version).toBe(5)
    expect(Result.isSuccess(decoded) && decoded.success.session.sessionId).toBe(SESSION)
    expect(Result.isSuccess(decoded) && decoded.success.runtime.pivots).toBe(2)
  })

  it("another format: reason format, naming both", () => {
    expect(rejection(stored(Sessions.encodeSnapshot(state(5)), 5, { format: "pivot-session/0" }))).toEqual({
      reason: "format",
      detail: `written as pivot-session/0, this program reads ${Sessions.SNAPSHOT_FORMAT}`,
    })
    expect(rejection(stored(Sessions.encodeSnapshot(state(5)), 5), "pivot-session/9")).toEqual({
      reason: "format",
      detail: `written as ${Sessions.SNAPSHOT_FORMAT}, this program reads pivot-session/9`,
    })
  })

  it("data that is not what its checksum says: reason checksum, naming the version", () => {
    const data = Sessions.encodeSnapshot(state(5))
    expect(rejection(stored(data, 5, { checksum: Snapshot.checksum(`${data} `) }))).toEqual({
      reason: "checksum",
      detail: "the data of version 5 does not match its checksum",
    })
  })

  it("a state of another version than the row says: unreadable, naming both versions", () => {
    expect(rejection(stored(Sessions.encodeSnapshot(state(4)), 5))).toEqual({
      reason: "unreadable",
      detail: "state of version 4 stored as 5",
    })
  })

  it("a state of another session: reason session, naming it", () => {
    expect(rejection(stored(Sessions.encodeSnapshot(state(5, "ses_other")), 5))).toEqual({
      reason: "session",
      detail: "it is a state of session ses_other",
    })
  })

  it("no runtime state, or one that is not an object: unreadable, saying so", () => {
    const session = StateSnapshot.encode(state(5).session)
    for (const runtime of [null, 7, "x", undefined])
      expect(rejection(stored(JSON.stringify({ session, runtime }), 5))).toEqual({
        reason: "unreadable",
        detail: "no runtime state",
      })
    expect(rejection(stored(JSON.stringify({ session, runtime: [] }), 5))).toEqual({
      reason: "unreadable",
      detail: "runtime state is not an object",
    })
    expect(rejection(stored("{not json", 5))).toMatchObject({ reason: "unreadable" })
  })

  it("the warning names the session, the reason and the detail on one line", () => {
    expect(Sessions.snapshotWarning("ses_a", "checksum", "the data of version 5 does not match its checksum")).toBe(
      "session ses_a: snapshot ignored (checksum: the data of version 5 does not match its checksum); folding the events instead",
    )
  })

  it("the format names both state encodings and changes with any event schema version", () => {
    expect(Sessions.snapshotFormat()).toBe(Sessions.SNAPSHOT_FORMAT)
    expect(
      Sessions.SNAPSHOT_FORMAT.startsWith(`pivot-session/${StateSnapshot.FORMAT}.${RuntimeState.FORMAT};events=`),
    ).toBe(true)
    expect(Sessions.SNAPSHOT_FORMAT.length).toBeGreaterThan(`pivot-session/1.1;events=`.length)
    expect(Sessions.snapshotFormat({ UserMessageAdded: 99 })).not.toBe(Sessions.SNAPSHOT_FORMAT)
  })
})

describe("RuntimeState.decode", () => {
  it("fills what JSON left out from the initial state, usage field by field", () => {
    expect(RuntimeState.decode({})).toEqual(RuntimeState.initial)
    const decoded = RuntimeState.decode({ pivots: 3, usage: {} })
    expect(decoded.pivots).toBe(3)
    expect(decoded.usage).toEqual(RuntimeState.initial.usage)
  })

  it("refuses what is not an object, and counters that are not whole numbers, naming the counter", () => {
    for (const raw of [null, [], "state", 3, undefined])
      expect(() => RuntimeState.decode(raw)).toThrow(/^runtime state is not an object$/)
    for (const key of ["streak", "pivots", "failures", "fallbacks", "forgotten"])
      for (const bad of [1.5, "2", null])
        expect(() => RuntimeState.decode({ [key]: bad })).toThrow(
          new RegExp(`^runtime state: ${key} is not a whole number$`),
        )
  })
})
