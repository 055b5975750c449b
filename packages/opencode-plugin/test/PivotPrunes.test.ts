// pivot's own prunes in a recorded OpenCode session (a strategy's rule under drive mode) beside OpenCode's: a prune
// pivot made is not taken for one the importer wrote (the recorder's prefix check counts the importer's events), and a
// part OpenCode prunes after pivot did is pruned once.
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { Events, Ids } from "@pivot/core"
import { Import } from "@pivot/opencode"
import { EventStore, SessionLog } from "@pivot/store"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { describe, expect, it } from "vitest"
import type { MessageWithParts } from "../src/OpenCode.ts"
import * as Recorder from "../src/Recorder.ts"

const fixture = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../opencode/test/fixtures/pruned.json")

type Json = { readonly [key: string]: any }
interface Exported {
  readonly info: { readonly id: string }
  readonly messages: ReadonlyArray<MessageWithParts>
}

/** The session as OpenCode held it before its prune: the first turn, nothing pruned yet. */
const beforePrune = (exported: Exported): Exported => ({
  info: exported.info,
  messages: exported.messages.slice(0, 3).map((m) => ({
    info: m.info,
    parts: m.parts.map((p) => {
      const part = p as Json
      if (part.state?.time?.compacted === undefined) return p
      const { compacted: _, ...time } = part.state.time
      return { ...part, state: { ...part.state, time } } as unknown as MessageWithParts["parts"][number]
    }),
  })),
})

const encode = (e: Events.Event) => JSON.stringify(Events.encode(e))

describe("pivot's prunes beside OpenCode's in the recorder", () => {
  it("a part pivot pruned first is pruned once when OpenCode prunes it too, and recording goes on", async () => {
    const exported = JSON.parse(Fs.readFileSync(fixture, "utf8")) as Exported
    const sessionId = exported.info.id
    const read = exported.messages[1]!.parts.find((p) => p.type === "tool" && p.tool === "read")! as Json
    const imported = Import.importSession(exported)
    if (Result.isFailure(imported)) throw imported.failure
    const result = await Effect.runPromise(
      Effect.provide(
        Effect.gen(function* () {
          const recorder = Recorder.make()
          yield* recorder.sync(sessionId, beforePrune(exported), "idle")
          // pivot's strategy prunes the read output (as drive mode's rules record it).
          const version = yield* SessionLog.version(sessionId)
          const mine: Events.Event = {
            _tag: "PartCompacted",
            at: 1_760_000_005_000,
            messageId: Ids.unsafe.message(exported.messages[1]!.info.id),
            partId: Ids.unsafe.part(read.id),
            tokens: 100,
            rule: "duplicate-calls",
            reason: "the same read again later",
          }
          yield* SessionLog.append(sessionId, version, [
            { id: SessionLog.eventId(sessionId, version + 1), event: mine },
          ])
          // OpenCode then prunes both outputs (the read one too) and the session goes on.
          yield* recorder.sync(sessionId, exported, "idle")
          const again = yield* Recorder.make().sync(sessionId, exported, "idle")
          return { again, log: (yield* SessionLog.read(sessionId)).map((l) => l.event) }
        }),
        EventStore.layerMemory(),
      ),
    )
    const prunes = result.log.filter((e) => e._tag === "PartCompacted")
    // Each part pruned once: the read output by pivot's rule, the grep output by OpenCode.
    expect(prunes.map((e) => [e.partId, e.rule])).toEqual([
      [read.id, "duplicate-calls"],
      [expect.not.stringMatching(read.id), undefined],
    ])
    // The importer's events are the import of what OpenCode holds, but for the prune pivot had made already.
    expect(result.log.filter(Recorder.isImported).map(encode)).toEqual(
      imported.success.events
        .filter((e) => !(e._tag === "PartCompacted" && e.partId === read.id))
        .filter(Recorder.isImported)
        .map(encode),
    )
    // A restarted recorder finds nothing to add.
    expect(result.again.appended).toBe(0)
  })
})
