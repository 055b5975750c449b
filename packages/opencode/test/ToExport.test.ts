// ToExport is the inverse of the importer's message mapping: an export whose messages are rebuilt from what the import
// made of them imports to the same events (the importer, written from OpenCode's shapes, is the reference), and every
// rebuilt message decodes as an export's message.
import * as Fs from "node:fs"
import * as Path from "node:path"
import { Conversation, Events } from "@pivot/core"
import { Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { runs } from "../../core/test/support/runs.ts"
import { MessageWithParts } from "../src/Export.ts"
import * as ToExport from "../src/ToExport.ts"
import { compactedExportArb, exportArb } from "./support/arbitraries.ts"
import { fixture, folded, imported, type RawExport } from "./support/fixtures.ts"

const encoded = (events: ReadonlyArray<Events.Event>) => events.map((e) => JSON.stringify(Events.encode(e)))

/** The export with each message replaced by ToExport of the message the import holds for its id. */
const rebuilt = (raw: RawExport): RawExport => {
  const conversation = folded(imported(raw)).window.conversation
  return {
    ...raw,
    messages: raw.messages.map((m) => {
      const message = Conversation.get(conversation, m.info.id as never)
      if (message === undefined) throw new Error(`the import holds no ${m.info.id}`)
      const built = ToExport.message(message, raw.info.id) as RawExport["messages"][number]
      // A started compaction's tail start lives in its plan (`CompactionStarted`), not in the marker the import keeps:
      // the one field a marker cannot give back (drive mode never builds a marker: OpenCode passes its own).
      const tail = m.parts.find((p) => p.type === "compaction")?.tail_start_id
      return tail === undefined
        ? built
        : { ...built, parts: built.parts.map((p) => (p.type === "compaction" ? { ...p, tail_start_id: tail } : p)) }
    }),
  }
}

const sameImport = (raw: RawExport): void => {
  const again = rebuilt(raw)
  for (const m of again.messages) expect(Schema.decodeUnknownExit(MessageWithParts)(m)._tag).toBe("Success")
  expect(encoded(imported(again).events)).toEqual(encoded(imported(raw).events))
}

const fixtures = Fs.readdirSync(Path.join(import.meta.dirname, "fixtures")).filter((f) => f.endsWith(".json"))

describe("ToExport.message", () => {
  it.each(fixtures)("rebuilds every message of %s so that it imports to the same events", (name) => {
    sameImport(fixture(name))
  })

  it("property: a generated export rebuilt from its import imports to the same events", () => {
    fc.assert(
      fc.property(exportArb, (raw) => sameImport(raw)),
      runs(200),
    )
  })

  it("property: the same through compactions and prunes", () => {
    fc.assert(
      fc.property(compactedExportArb, (raw) => sameImport(raw)),
      runs(200),
    )
  })

  it("carries a pruned output's time, and the session and message ids on every part", () => {
    const raw = fixture("pruned.json")
    const conversation = folded(imported(raw)).window.conversation
    const pruned = Conversation.messages(conversation).find((m) =>
      m.parts.some((p) => p.type === "tool" && p.state.status === "completed" && p.state.compactedAt !== undefined),
    )!
    const built = ToExport.message(pruned, raw.info.id)
    expect(built.parts.every((p) => p.sessionID === raw.info.id && p.messageID === pruned.id)).toBe(true)
    const tool = built.parts.find(
      (p) => p.type === "tool" && (p.state as { time: { compacted?: number } }).time.compacted !== undefined,
    )
    expect(tool).toBeDefined()
  })
})
