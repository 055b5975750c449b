// Helpers for the session tests: generated sessions appended step by step, and a store kept open across runs.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Audit, Conversation, type Events, Recall, Usage, Window } from "@pivot/core"
import { Effect, type Layer, ManagedRuntime } from "effect"
import type fc from "fast-check"
import { afterAll, expect } from "vitest"
import * as Reference from "../../../core/test/support/readModels.ts"
import { type Generated, generatedArb } from "../../../core/test/support/sessions.ts"
import { type EventStore, ReadModels, SessionLog } from "../../src/index.ts"

/** A generated session as the store sees it: its events, and the batches the Decider's commands appended. */
export interface GeneratedSession {
  readonly events: ReadonlyArray<Events.Event>
  readonly batches: ReadonlyArray<ReadonlyArray<Events.Event>>
}

/** The batches a generated session's commands appended, one per decided command, empty ones left out. */
export const toSession = (generated: Generated): GeneratedSession => ({
  events: generated.events,
  batches: generated.steps.map((step) => step.events).filter((events) => events.length > 0),
})

/** Arbitrary sessions run through the Decider (core's generator), up to `maxActions` agent-loop actions. */
export const sessionArb = (maxActions: number): fc.Arbitrary<GeneratedSession> =>
  generatedArb(maxActions).map(toSession)

/** Appends a generated session as the command handler would: one batch per command, with the exact version. */
export const appendGenerated = (sessionId: string, session: GeneratedSession) =>
  Effect.gen(function* () {
    let version = 0
    for (const batch of session.batches) {
      const entries = batch.map((event, i) => ({ id: SessionLog.eventId(sessionId, version + i + 1), event }))
      const result = yield* SessionLog.append(sessionId, version, entries)
      version = result.streamVersion
    }
    return version
  })

/** A store (and read models) opened once for many property runs. */
export const open = <R>(layer: Layer.Layer<R, unknown>) => ManagedRuntime.make(layer)

/**
 * A SQLite store with its read models, in a temporary folder named `prefix…`, opened once for a test file's property
 * runs and closed and removed after the file. `synchronous: "normal"`: the properties are about what the tables hold,
 * not about surviving a power cut.
 */
export const openSqliteOnce = (prefix: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
  const runtime = open(ReadModels.layerSqlite({ filename: path.join(dir, "store.db"), synchronous: "normal" }))
  afterAll(async () => {
    await runtime.dispose()
    fs.rmSync(dir, { recursive: true, force: true })
  })
  return runtime
}

let sessions = 0
/** A session id no earlier run used (runs share one store). */
export const freshSession = (prefix = "p") => `ses_${prefix}${process.pid}x${++sessions}`

/**
 * Checks every read model of `sessionId` against the pure fold of its events, and usage, the prune index and the
 * compaction history also against core's reference models (written apart from the `evolve` code both sides run).
 */
export const expectReadModelsEqualFold = (sessionId: string, events: ReadonlyArray<Events.Event>) =>
  Effect.gen(function* () {
    const readModels = yield* ReadModels.ReadModels
    expect(yield* readModels.usage(sessionId)).toEqual(Reference.usage(events))
    expect(yield* readModels.pruned(sessionId)).toEqual(
      Reference.pruned(events, (version) => SessionLog.eventId(sessionId, version)),
    )
    expect(
      (yield* readModels.compactions(sessionId)).map((e) => ({
        markerId: e.markerId,
        status: e.status,
        summaryId: e.summaryId,
        tokensBefore: e.tokensBefore,
        tokensAfter: e.tokensAfter,
      })),
    ).toEqual(Reference.compactions(events))
    const states = ReadModels.foldStates(SessionLog.fromEvents(sessionId, events))
    expect(yield* readModels.window(sessionId)).toEqual(Window.messages(Window.fold(events)))
    expect(yield* readModels.window(sessionId)).toEqual(Window.messages(states.window))
    expect(yield* readModels.usage(sessionId)).toEqual(states.usage)
    expect(Usage.report(yield* readModels.usage(sessionId), {}, { context: 100_000, output: 32_000 }, 0)).toEqual(
      Usage.report(states.usage, {}, { context: 100_000, output: 32_000 }, 0),
    )
    expect(yield* readModels.compactions(sessionId)).toEqual(states.history.entries)
    expect(yield* readModels.pruned(sessionId)).toEqual(states.pruned)
    expect(yield* readModels.audit(sessionId)).toEqual(Audit.entries(states.audit))
    // The recall index holds exactly the fold's recallable documents (rows compared as a set: SQL collations differ).
    const byId = (a: { readonly id: string }, b: { readonly id: string }) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)
    const rows = (yield* readModels.tables(sessionId)).recall as ReadonlyArray<RecallRow>
    expect(
      rows
        .map((r) => ({
          id: r.doc_id,
          kind: r.kind,
          messageId: r.message_id,
          tool: r.tool ?? undefined,
          pivot: r.pivot ?? undefined,
          text: r.body,
        }))
        .sort(byId),
    ).toEqual(
      Recall.documents(
        Conversation.messages(states.window.conversation),
        Recall.behindMap(Recall.pivotsOf(states.history.entries)),
      )
        .map((d) => ({ id: d.id, kind: d.kind, messageId: d.messageId, tool: d.tool, pivot: d.pivot, text: d.text }))
        .sort(byId),
    )
  })

interface RecallRow {
  readonly doc_id: string
  readonly kind: string
  readonly message_id: string
  readonly tool: string | null
  readonly pivot: string | null
  readonly body: string
}

/** The store layer type the helpers run in. */
export type Stores = EventStore | ReadModels.ReadModels
