/** `pivot pin` / `pivot unpin` on an imported session: they write pin events, and refuse bad input in one line. */
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { Events, Window } from "@pivot/core"
import { afterAll, describe, expect, it } from "vitest"
import { importedEvents, pivot, realExport, realSessionId, tempDir } from "./support/audit.ts"

const dir = tempDir()
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
const hash = (file: string) => crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex")

const importedDb = async (name: string) => {
  const db = path.join(dir, `${name}.db`)
  expect((await pivot("import", realExport, "--db", db)).code).toBe(0)
  return db
}

/** The first user message of the real export, and one marker (not pinnable). */
const events = importedEvents(realExport)
const messages = Window.fold(events).conversation
const firstUser = events.find((e) => e._tag === "UserMessageAdded")!
const firstId = firstUser._tag === "UserMessageAdded" ? firstUser.message.id : ""
const markerEvent = events.find((e) => e._tag === "CompactionRequested")

describe("pivot pin / unpin", () => {
  it("pins a message (ContextPinned by the user), says so again without writing, and unpins it", async () => {
    expect(messages.order.length).toBeGreaterThan(0)
    const db = await importedDb("pin")
    const pinned = await pivot("pin", "--db", db, realSessionId, firstId, "--budget", "50000")
    expect(pinned).toMatchObject({ code: 0, err: [] })
    expect(pinned.out[0]).toMatch(
      new RegExp(
        `^pinned message ${firstId} in session ${realSessionId} \\(~[\\d,]+ tokens; pins use [\\d,]+ of 50,000\\)$`,
      ),
    )
    const inspected = await pivot("inspect", "--db", db, "--session", realSessionId)
    const at = inspected.out.indexOf("pins (1 pin in force, 1 message: kept verbatim after every pivot)")
    expect(at).toBeGreaterThan(0)
    expect(inspected.out[at + 2]).toMatch(new RegExp(`^ *\\d+ +pinned +${firstId} +user, ~[\\d,]+ tokens$`))
    const json = JSON.parse((await pivot("inspect", "--db", db, "--session", realSessionId, "--format", "json")).stdout)
    expect(json.pins).toEqual([expect.objectContaining({ action: "pinned", messageId: firstId, why: "user" })])
    const before = hash(db)
    const again = await pivot("pin", "--db", db, realSessionId, firstId, "--budget", "50000")
    expect(again.out).toEqual([`message ${firstId} was already pinned in session ${realSessionId}; nothing written`])
    expect(hash(db)).toBe(before)
    const unpinned = await pivot("unpin", "--db", db, realSessionId, firstId)
    expect(unpinned.out).toEqual([`unpinned message ${firstId} in session ${realSessionId} (1 pin removed)`])
    const notPinned = await pivot("unpin", "--db", db, realSessionId, firstId)
    expect(notPinned.out).toEqual([`message ${firstId} was not pinned in session ${realSessionId}; nothing written`])
  })

  it("bad input: one line each, exit 1 (2 for wrong usage), the file unchanged", async () => {
    const db = await importedDb("pin-bad")
    const unchanged = hash(db)
    const markerId = markerEvent?._tag === "CompactionRequested" ? markerEvent.marker.id : undefined
    const cases: Array<readonly [ReadonlyArray<string>, RegExp, number]> = [
      [["pin", "--db", db, realSessionId, "nope"], /^pivot pin: "nope" is not a message id \(msg_…\)$/, 2],
      [
        ["pin", "--db", db, realSessionId, "msg_0000nothere", "--budget", "9"],
        /^pivot pin: no message msg_0000nothere in this session$/,
        1,
      ],
      [
        ["pin", "--db", db, realSessionId, firstId, "--budget", "1"],
        /^pivot pin: message .* is larger than the pin budget \(1 tokens\)/,
        1,
      ],
      [
        ["pin", "--db", db, realSessionId, firstId, "--part", "prt_nope", "--budget", "50000"],
        /cannot be pinned: it has no part prt_nope$/,
        1,
      ],
      [["unpin", "--db", db, realSessionId], /^pivot unpin: the message id \(msg_…\) is required$/, 2],
      // The export's model is not in pivot's catalog: the budget must be given.
      [
        ["pin", "--db", db, realSessionId, firstId],
        /^pivot pin: the model .* is not in pivot's catalog: give the pin budget with --budget TOKENS$/,
        2,
      ],
      ...(markerId === undefined
        ? []
        : [
            [
              ["pin", "--db", db, realSessionId, markerId, "--budget", "50000"],
              /it is a compaction marker$/,
              1,
            ] as const,
          ]),
    ]
    for (const [args, line, code] of cases) {
      const out = await pivot(...args)
      expect(out.code, args.join(" ")).toBe(code)
      expect(out.err[0], args.join(" ")).toMatch(line)
      expect(hash(db)).toBe(unchanged)
    }
    expect(Events.types).toContain("ContextPinned")
  })
})
