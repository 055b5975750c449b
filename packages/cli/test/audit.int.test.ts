/** The audit commands (import, window, prune, inspect) on the real export and the OpenCode fixtures, and every error. */
import * as fs from "node:fs"
import * as path from "node:path"
import { Conversation, Ledger, Prune, Window } from "@pivot/core"
import { Config } from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { MAX_INPUT_BYTES } from "../src/commands/Source.ts"
import {
  expectedWindow,
  fixture,
  importedEvents,
  pivot,
  pruneableExport,
  realExport,
  realSessionId,
  tempDir,
} from "./support/audit.ts"

const dir = tempDir()
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
let dbs = 0
const freshDb = () => path.join(dir, `audit-${++dbs}.db`)

/** A database holding the real export. */
const importedDb = async () => {
  const db = freshDb()
  const result = await pivot("import", realExport, "--db", db)
  expect(result.code).toBe(0)
  return db
}

/** Appends a raw event to a session of a database, as another program (or a newer pivot) would. */
const appendRaw = (db: string, type: string, version: number, data: unknown) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* EventStore
      yield* store.append(`session-${realSessionId}`, "any", [
        { id: `evt_raw_${type}_${version}`, type, version, data },
      ])
    }).pipe(Effect.provide(EventStore.layerSqlite({ filename: db }))),
  )

/** A failure: exit 1, nothing on stdout, and exactly one line on stderr, naming the command. */
/** The pruneable export with its `read` outputs cut to 400 characters (~100 tokens), written as `name`. */
const smallOutputsExport = (name: string) => {
  const exported = JSON.parse(fs.readFileSync(pruneableExport(dir), "utf8"))
  for (const message of exported.messages)
    for (const part of message.parts)
      if (part.type === "tool" && part.tool === "read") part.state.output = "x".repeat(400)
  const file = path.join(dir, name)
  fs.writeFileSync(file, JSON.stringify(exported))
  return file
}

const expectOneLineFailure = (result: Awaited<ReturnType<typeof pivot>>, command: string, pattern: RegExp) => {
  expect(result.code).toBe(1)
  expect(result.out).toEqual([])
  expect(result.err).toHaveLength(1)
  expect(result.err[0]).not.toContain("\n")
  expect(result.err[0]).toMatch(new RegExp(`^pivot ${command}: `))
  expect(result.err[0]).toMatch(pattern)
}

describe("pivot import", () => {
  it("given the real export, then it stores the session and prints its id and counts", async () => {
    const db = freshDb()
    const result = await pivot("import", realExport, "--db", db)
    expect(result.code).toBe(0)
    expect(result.out[0]).toBe(`imported session ${realSessionId} into ${db}`)
    expect(result.stdout).toContain("36 events: 27 AssistantStepRecorded, 8 UserMessageAdded, 1 SessionStarted")
    expect(result.stdout).toContain("35 messages, 118 parts")
    expect(result.stdout).toContain("window: 35 messages · 0 pivots · 0 pruned outputs")
    expect(fs.existsSync(db)).toBe(true)
  })

  it("given the same export twice, then the second import is a no-op that says so (exit 0)", async () => {
    const db = await importedDb()
    const again = await pivot("import", realExport, "--db", db)
    expect(again.code).toBe(0)
    expect(again.out).toEqual([`session ${realSessionId} is already in ${db} (36 events, the same): nothing to import`])
  })

  it("given --encrypt for a session already stored in plain text, then it is refused: it cannot be encrypted there", async () => {
    const db = await importedDb()
    const before = fs.readFileSync(db)
    // It said "the same: nothing to import" (exit 0): the text the user asked to encrypt stayed in plain text.
    expectOneLineFailure(
      await pivot("import", realExport, "--db", db, "--encrypt"),
      "import",
      /already in .* stored in plain text: --encrypt cannot encrypt it there; import it into another database/,
    )
    expect(fs.readFileSync(db).equals(before)).toBe(true)
    // Encrypted, then imported again with or without --encrypt: the same, nothing to do.
    const sealed = freshDb()
    expect((await pivot("import", realExport, "--db", sealed, "--encrypt")).code).toBe(0)
    expect((await pivot("import", realExport, "--db", sealed, "--encrypt")).code).toBe(0)
    expect((await pivot("import", realExport, "--db", sealed)).code).toBe(0)
  })

  it("given another export of a session already stored, then it is refused in one line and nothing changes", async () => {
    const db = await importedDb()
    const shorter = JSON.parse(fs.readFileSync(realExport, "utf8"))
    shorter.messages = shorter.messages.slice(0, 10)
    const file = path.join(dir, "shorter.json")
    fs.writeFileSync(file, JSON.stringify(shorter))
    expectOneLineFailure(
      await pivot("import", file, "--db", db),
      "import",
      /already in .* with 36 events that differ from this export \(11 events\); nothing imported/,
    )
    expect((await pivot("window", "--db", db, "--format", "json")).stdout).toBe(
      (await pivot("window", realExport, "--format", "json")).stdout,
    )
  })

  it("given a device or a file over the read limit, then import refuses it in one line before reading, exit 1", async () => {
    // /dev/null is a character device like /dev/zero, but ends: before the check it was read and called invalid JSON.
    expectOneLineFailure(
      await pivot("import", "/dev/null", "--db", freshDb()),
      "import",
      /: \/dev\/null is not a regular file$/,
    )
    // A sparse file one byte over the limit: refused from its size, without reading 1 GiB.
    const huge = path.join(dir, "huge.json")
    fs.writeFileSync(huge, "")
    fs.truncateSync(huge, MAX_INPUT_BYTES + 1)
    try {
      expectOneLineFailure(
        await pivot("import", huge, "--db", freshDb()),
        "import",
        /huge\.json is 1,073,741,825 bytes, more than the 1,073,741,824 \(1 GiB\) pivot reads \(MAX_INPUT_BYTES\)$/,
      )
    } finally {
      fs.rmSync(huge)
    }
  })

  it("given a missing file, broken JSON or an invalid export, then one line says what is wrong, exit 1", async () => {
    expectOneLineFailure(
      await pivot("import", path.join(dir, "nope.json")),
      "import",
      /cannot read .*nope\.json: no such file$/,
    )
    expectOneLineFailure(
      await pivot("import", fixture("malformed/invalid-json.txt"), "--db", freshDb()),
      "import",
      /invalid-json\.txt: Invalid OpenCode export at line \d+, column \d+: not valid JSON/,
    )
    expectOneLineFailure(
      await pivot("import", fixture("malformed/unknown-tool-status.json"), "--db", freshDb()),
      "import",
      /Invalid OpenCode export at messages\[1\]\.parts\[1\]\.state\.status: expected one of/,
    )
  })

  it("given a corrupt database file, then it is refused in one line and left byte for byte as it was", async () => {
    const db = freshDb()
    const junk = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 251))
    fs.writeFileSync(db, junk)
    expectOneLineFailure(await pivot("import", realExport, "--db", db), "import", /not a SQLite database/)
    expect(fs.readFileSync(db).equals(junk)).toBe(true)
  })

  it("given no file, then it is a usage error (exit 2)", async () => {
    const result = await pivot("import")
    expect(result.code).toBe(2)
    expect(result.err.join("\n")).toContain("give the export file to import")
  })
})

describe("pivot window", () => {
  it("given --format json, then it prints exactly { messages: [{ sourceMessageId, message }] }, the rendered window", async () => {
    const result = await pivot("window", realExport, "--format", "json")
    expect(result.code).toBe(0)
    const parsed = JSON.parse(result.stdout)
    expect(Object.keys(parsed)).toEqual(["messages"])
    for (const item of parsed.messages) expect(Object.keys(item)).toEqual(["sourceMessageId", "message"])
    expect(parsed).toEqual({ messages: expectedWindow(importedEvents(realExport)) })
    expect(new Set(parsed.messages.map((m: { message: { role: string } }) => m.message.role))).toEqual(
      new Set(["user", "assistant", "tool"]),
    )
  })

  it("given a database, then the window from its read model equals the window of the export", async () => {
    const db = await importedDb()
    const fromDb = await pivot("window", "--db", db, "--session", realSessionId, "--format", "json")
    const fromFile = await pivot("window", realExport, "--format", "json")
    expect(fromDb.code).toBe(0)
    expect(fromDb.stdout).toBe(fromFile.stdout)
    // One session in the database: --session may be left out.
    expect((await pivot("window", "--db", db, "--format", "json")).stdout).toBe(fromFile.stdout)
  })

  it("given --at, then it replays the window right after that event, from the file and from the database alike", async () => {
    const file = fixture("compaction-tail.json")
    const events = importedEvents(file)
    const db = freshDb()
    expect((await pivot("import", file, "--db", db)).code).toBe(0)
    for (const at of [0, 1, 8, 11, events.length]) {
      const fromFile = await pivot("window", file, "--at", String(at), "--format", "json")
      expect(JSON.parse(fromFile.stdout)).toEqual({ messages: expectedWindow(events, at) })
      expect((await pivot("window", "--db", db, "--at", String(at), "--format", "json")).stdout).toBe(fromFile.stdout)
    }
  })

  it("given text format, then it shows roles, ids, truncated content, the pivot and pruned outputs", async () => {
    const pivoted = await pivot("window", fixture("compaction-tail.json"))
    expect(pivoted.code).toBe(0)
    expect(pivoted.out[0]).toBe(
      "session ses_compaction · version 15 of 15 · 8 stored messages → 8 model messages · ~194 tokens",
    )
    expect(pivoted.out[1]).toMatch(
      /^──── pivot ─+ compaction msg_08: the summary below stands for everything before it$/,
    )
    expect(pivoted.out[2]).toBe("   1  user       msg_08  What did we do so far?")
    expect(pivoted.out[3]).toMatch(/^ {3}2 {2}summary {4}msg_09 {2}## Objective/)
    const pruned = await pivot("window", fixture("pruned.json"))
    expect(pruned.stdout).toContain("⇠ read: ✂ pruned prt_02_03 (~100 tokens cleared)")
    const real = await pivot("window", realExport)
    for (const line of real.out) expect(line.length).toBeLessThanOrEqual(120)
  })

  it("given --sources, then each message lists the events it came from, alike from the file and the database", async () => {
    const file = fixture("compaction-tail.json")
    const db = freshDb()
    expect((await pivot("import", file, "--db", db)).code).toBe(0)
    const fromFile = await pivot("window", file, "--sources")
    expect(fromFile.out.slice(2, 4)).toEqual([
      "   1  user       msg_08  What did we do so far?",
      "                 ↳ from evt_compaction_000009, evt_compaction_000010, evt_compaction_000011",
    ])
    expect((await pivot("window", "--db", db, "--sources")).stdout).toBe(fromFile.stdout)
    expect((await pivot("window", "--db", db, "--at", "8", "--sources")).stdout).toBe(
      (await pivot("window", file, "--at", "8", "--sources")).stdout,
    )
    expect((await pivot("window", file, "--sources", "--format", "json")).code).toBe(2)
  })

  it("given a version out of range, an unknown session or no database, then one line says so (exit 1)", async () => {
    expectOneLineFailure(
      await pivot("window", realExport, "--at", "37"),
      "window",
      /version 37 is out of range: session ses_04ca851f7ffevKrKMHW3RsPK1U has 36 events \(use 0 to 36\)$/,
    )
    const db = await importedDb()
    expectOneLineFailure(await pivot("window", "--db", db, "--at", "99"), "window", /version 99 is out of range/)
    expectOneLineFailure(
      await pivot("window", "--db", db, "--session", "ses_nobody"),
      "window",
      new RegExp(`unknown session ses_nobody in .* \\(it holds ${realSessionId}\\)$`),
    )
    const missing = path.join(dir, "missing.db")
    expectOneLineFailure(await pivot("window", "--db", missing), "window", /no database at .*missing\.db/)
    expect(fs.existsSync(missing)).toBe(false)
  })

  it("given a corrupt database, then one line says so and the file is untouched", async () => {
    const db = freshDb()
    const truncated = fs.readFileSync(await importedDb()).subarray(0, 1000)
    fs.writeFileSync(db, truncated)
    expectOneLineFailure(await pivot("window", "--db", db), "window", /truncated|corrupt|malformed|not a/)
    expect(fs.readFileSync(db).equals(truncated)).toBe(true)
  })

  it("given an event of an unknown type in the database, then one line names it (exit 1)", async () => {
    const db = await importedDb()
    await appendRaw(db, "MysteryHappened", 1, {})
    expectOneLineFailure(
      await pivot("window", "--db", db),
      "window",
      /event 37 \(MysteryHappened\): unknown event type MysteryHappened/,
    )
    // The window before that event can still be replayed.
    expect((await pivot("window", "--db", db, "--at", "36", "--format", "json")).stdout).toBe(
      (await pivot("window", realExport, "--format", "json")).stdout,
    )
  })

  it("given an event from a newer schema version in the database, then one line says to upgrade (exit 1)", async () => {
    const db = await importedDb()
    await appendRaw(db, "UserMessageAdded", 2, {})
    expectOneLineFailure(
      await pivot("inspect", "--db", db),
      "inspect",
      /event 37 \(UserMessageAdded\): schema version 2 is newer than this pivot reads \(up to 1\); upgrade pivot$/,
    )
  })

  it("given wrong usage, then exit 2 with the command's usage", async () => {
    for (const args of [
      ["window"],
      ["window", realExport, "--db", "x.db"],
      ["window", realExport, "--format", "yaml"],
      ["window", realExport, "--at", "-1"],
      ["window", realExport, "extra.json"],
    ]) {
      const result = await pivot(...args)
      expect(result.code).toBe(2)
      expect(result.err.join("\n")).toContain("Usage: pivot window")
    }
  })
})

describe("pivot prune --dry-run", () => {
  it("given the spec's P1 session, then JSON lists the part a prune would clear and the tokens it frees", async () => {
    const file = pruneableExport(dir)
    const result = await pivot("prune", file, "--dry-run", "--format", "json")
    expect(result.code).toBe(0)
    expect(JSON.parse(result.stdout)).toEqual({ parts: ["prt_02_03"], tokensFreed: 50_000 })
    expect(Object.keys(JSON.parse(result.stdout))).toEqual(["parts", "tokensFreed"])
    const text = await pivot("prune", file, "--dry-run")
    expect(text.out[0]).toContain("would clear 1 tool output, freeing ~50,000 tokens")
    expect(text.stdout).toMatch(/prt_02_03 +read +msg_02 +50,000/)
  })

  it("given a database, then the dry run is the same and writes nothing", async () => {
    const file = pruneableExport(dir)
    const db = freshDb()
    expect((await pivot("import", file, "--db", db)).code).toBe(0)
    const before = fs.readFileSync(db)
    const result = await pivot("prune", "--db", db, "--dry-run", "--format", "json")
    expect(JSON.parse(result.stdout)).toEqual({ parts: ["prt_02_03"], tokensFreed: 50_000 })
    expect(fs.readFileSync(db).equals(before)).toBe(true)
  })

  it("given nothing to prune, then an empty selection; at an earlier version too", async () => {
    expect(JSON.parse((await pivot("prune", realExport, "--dry-run", "--format", "json")).stdout)).toEqual({
      parts: [],
      tokensFreed: 0,
    })
    const early = await pivot("prune", pruneableExport(dir), "--dry-run", "--at", "3", "--format", "json")
    expect(JSON.parse(early.stdout)).toEqual({ parts: [], tokensFreed: 0 })
    expect((await pivot("prune", realExport, "--dry-run")).out[0]).toContain("nothing to clear")
  })

  it("given --protect/--minimum, then the dry run uses them and says so; without them OpenCode's, named", async () => {
    // Outputs of ~100 tokens: nothing under OpenCode's thresholds, as in a session run with small ones (the demo's).
    const small = smallOutputsExport("small-outputs.json")
    const fixed = await pivot("prune", small, "--dry-run")
    expect(fixed.out[0]).toContain("nothing to clear")
    expect(fixed.out[0]).toContain(
      "protect 40,000, minimum 20,000, protected tools skill, OpenCode's; for a session run with others",
    )
    const given = await pivot("prune", small, "--dry-run", "--protect", "5", "--minimum", "50")
    expect(given.code).toBe(0)
    expect(given.out[0]).toMatch(
      /would clear \d+ tool outputs, freeing ~\d+ tokens \(protect 5, minimum 50, protected tools skill\)$/,
    )
    expect(given.stdout).toMatch(/prt_02_03 +read +msg_02/)
    // The same selection as the rule's own function with those thresholds, from the imported conversation.
    const json = JSON.parse(
      (await pivot("prune", small, "--dry-run", "--protect", "5", "--minimum", "50", "--format", "json")).stdout,
    )
    const want = Prune.selectNewestFirst(Conversation.newestFirst(Window.fold(importedEvents(small)).conversation), {
      protect: 5,
      minimum: 50,
    })
    expect(json).toEqual({ parts: want.parts.map((p) => p.partId), tokensFreed: want.tokensFreed })
    expect(want.parts.length).toBeGreaterThan(0)
    // A minimum above what it frees: nothing, naming the thresholds given.
    const high = await pivot("prune", small, "--dry-run", "--protect", "5", "--minimum", "100000")
    expect(high.out[0]).toMatch(/nothing to clear .*: protect 5, minimum 100,000, protected tools skill\)$/)
    expect((await pivot("prune", small, "--dry-run", "--protect", "many")).code).toBe(2)
  })

  it("given --protected-tools, then the dry run never clears nor counts those tools' outputs, names them, and matches Prune.selectNewestFirst", async () => {
    // Outputs of ~100 (read), ~10 (grep) and ~3 (bash) tokens, and thresholds small enough to clear some of them.
    const small = smallOutputsExport("protected-tools.json")
    const conversation = Window.fold(importedEvents(small)).conversation
    const thresholds = ["--dry-run", "--protect", "5", "--minimum", "1"]
    const dryRun = async (...flags: ReadonlyArray<string>) =>
      JSON.parse((await pivot("prune", small, ...thresholds, ...flags, "--format", "json")).stdout)
    const reference = (protectedTools: ReadonlyArray<string>) => {
      const want = Prune.selectNewestFirst(Conversation.newestFirst(conversation), {
        protect: 5,
        minimum: 1,
        protectedTools,
      })
      return { parts: want.parts.map((p) => p.partId), tokensFreed: want.tokensFreed }
    }

    // OpenCode's list (skill) unless given: the read output is cleared.
    expect(await dryRun()).toEqual(reference(Prune.PRUNE_PROTECTED_TOOLS))
    expect(reference(Prune.PRUNE_PROTECTED_TOOLS).parts).toContain("prt_02_03")
    // read protected: never cleared, and its tokens no longer count toward protect.
    const protectedRead = await dryRun("--protected-tools", "read")
    expect(protectedRead).toEqual(reference(["read"]))
    expect(protectedRead.parts).not.toContain("prt_02_03")
    expect(protectedRead).not.toEqual(await dryRun())
    // Spaces around names and repeats are dropped; two tools at once.
    expect(await dryRun("--protected-tools", " read , read")).toEqual(reference(["read"]))
    expect(await dryRun("--protected-tools=read,grep")).toEqual(reference(["read", "grep"]))

    // The text names the list used (as the flag takes it) beside the thresholds.
    const text = await pivot("prune", small, ...thresholds, "--protected-tools", "skill,read")
    expect(text.code).toBe(0)
    expect(text.out[0]).toMatch(/\(protect 5, minimum 1, protected tools skill,read\)$/)
    const only = await pivot("prune", small, "--dry-run", "--protected-tools", "read")
    expect(only.out[0]).toMatch(/protect 40,000, minimum 20,000, protected tools read\)$/)

    // An empty name (a doubled or trailing comma, only spaces): one line naming the flag, exit 2; an empty value is
    // a missing one.
    for (const bad of ["read,,grep", "read,", ",read", " , "]) {
      const refused = await pivot("prune", small, "--dry-run", "--protected-tools", bad)
      expect(refused.code).toBe(2)
      expect(refused.out).toEqual([])
      expect(refused.err[0]).toMatch(
        /^pivot prune: Invalid value for flag --protected-tools: .*a comma-separated list of names with no empty one for --protected-tools$/,
      )
    }
    const empty = await pivot("prune", small, "--dry-run", "--protected-tools", "")
    expect(empty.code).toBe(2)
    expect(empty.err[0]).toMatch(/^pivot prune: .*--protected-tools/)
  })

  it("given no --dry-run, then it is a usage error (prune never writes)", async () => {
    const result = await pivot("prune", realExport)
    expect(result.code).toBe(2)
    expect(result.err.join("\n")).toContain("only --dry-run is supported")
  })
})

describe("pivot inspect", () => {
  it("given the real export, then it lists the events by type, no pivot, no prune, and usage at each call", async () => {
    const result = await pivot("inspect", realExport)
    expect(result.code).toBe(0)
    expect(result.out[0]).toMatch(
      /^session ses_04ca851f7ffevKrKMHW3RsPK1U ".*" · .* · 36 events · 35 messages \(8 user, 27 assistant\)$/,
    )
    expect(result.stdout).toMatch(/ {2}AssistantStepRecorded +27\n {2}UserMessageAdded +8\n {2}SessionStarted +1/)
    expect(result.stdout).toContain("pivots: none")
    expect(result.stdout).toContain("pruned outputs: none")
    expect(result.out.filter((line) => /^ {2}v\d+ +msg_/.test(line))).toHaveLength(26)
  })

  it("given a compaction, then each pivot says what it summarised and kept, tokens before → after, and --at to replay", async () => {
    const result = await pivot("inspect", fixture("compaction-tail.json"))
    expect(result.stdout).toContain("pivots (1)")
    expect(result.stdout).toContain("#1 auto · finished, then continued · replay with --at 11 (before it: --at 8)")
    expect(result.stdout).toContain("summarised 5 messages (msg_01 … msg_05) · kept 2 messages (msg_06 … msg_07)")
    expect(result.stdout).toContain("tokens 310 → 160 · marker msg_08 · summary msg_09")
    expect(result.stdout).toContain("summariser anthropic/claude-sonnet-4 · prompt not recorded · summary 60 tokens")
    expect(result.stdout).toMatch(/v11 +── pivot #1/)
    // Replaying at the version inspect names shows the window right after the pivot.
    const json = JSON.parse((await pivot("inspect", fixture("compaction-tail.json"), "--format", "json")).stdout)
    const after = JSON.parse(
      (await pivot("window", fixture("compaction-tail.json"), "--at", String(json.pivots[0].at), "--format", "json"))
        .stdout,
    )
    expect(after.messages.slice(0, 2).map((m: { sourceMessageId: string }) => m.sourceMessageId)).toEqual([
      json.pivots[0].markerId,
      json.pivots[0].summaryId,
    ])
  })

  it("given a failed summary and prunes, then they are listed", async () => {
    const failed = await pivot("inspect", fixture("summary-failed.json"))
    expect(failed.stdout).toContain("compactions without a pivot (1)")
    expect(failed.stdout).toMatch(
      /msg_05 failed \(requested at version 6, settled at 8\): Session too large to compact/,
    )
    const pruned = await pivot("inspect", fixture("pruned.json"))
    expect(pruned.stdout).toContain("pruned outputs (2, ~110 tokens freed)")
    expect(pruned.stdout).toMatch(/5 +prt_02_03 +msg_02 +100/)
  })

  it("given a compaction and a prune, then the ledger is shown beside the pivot, per prune, and in JSON as the fold computes it", async () => {
    const result = await pivot("inspect", fixture("compaction-tail.json"))
    expect(result.stdout).toMatch(
      /#1 auto[^\n]*\n(?: {5}[^\n]*\n)* {5}ledger: shed ~\d+ tokens · summary call [\d,]+ eq \(\$0\.\d{4}\) · cache ~\d+ invalidated, ~\d+ re-written · net saving -?[\d,]+ eq over 2 calls/,
    )
    expect(result.stdout).toMatch(/^ {2}v13 +msg_11 +160 +prefix +\d+%/m)
    // An imported compaction has no recorded check: it is computed from the plan's head and the summary.
    expect(result.stdout).toContain(
      "kept: the summary names 2 of 3 artifacts of its span (files read 0/1, requests 2/2); 3 of 3 in view or recallable · checked now, not recorded",
    )
    expect(result.stdout).toContain('not named: file-read "/repo/config.json"')
    const json = JSON.parse((await pivot("inspect", fixture("compaction-tail.json"), "--format", "json")).stdout)
    const events = importedEvents(fixture("compaction-tail.json"))
    const want = Ledger.fold(events, (ref) => Config.priceOf(ref))
    expect(json.ledger.totals).toEqual(JSON.parse(JSON.stringify(Ledger.totals(want))))
    const { retention, ...entry } = Ledger.entries(want)[0]!
    expect(json.pivots[0].ledger).toEqual(JSON.parse(JSON.stringify(entry)))
    expect(retention).toMatchObject({ recorded: false })
    // The summary does not name the file it read, but context_recall gives back the read's input: recallable.
    expect(json.pivots[0].retention).toMatchObject({ recorded: false, total: 3, named: 2, inView: 2, reachable: 3 })
    expect(json.pivots[0].retention.byKind["file-read"]).toEqual({ total: 1, named: 0, inView: 0, reachable: 1 })
    expect(json.pivots[0].retention.artifacts[0]).toEqual({
      kind: "file-read",
      text: "/repo/config.json",
      named: false,
      recallable: true,
    })
    expect(json.ledger.calls.map((c: { kind: string }) => c.kind)).toEqual(Ledger.calls(want).map((c) => c.kind))
    const pruned = await pivot("inspect", fixture("pruned.json"))
    expect(pruned.stdout).toMatch(/v6 prune of 2 outputs · ledger: shed ~\d+ tokens · cache/)
    expect(pruned.stdout).toContain("0 compactions, 1 prune")
  })

  it("given a recorded check, then each artifact is in view, recallable from the pivot's head, or lost (named last)", async () => {
    const db = freshDb()
    expect((await pivot("import", fixture("compaction-tail.json"), "--db", db)).code).toBe(0)
    // The runtime recorded the file (the head holds its read: recallable) and a command the head has no trace of (as
    // when the runtime was given other tool names): not known to be recallable, so lost.
    await Effect.runPromise(
      Effect.gen(function* () {
        const store = yield* EventStore
        yield* store.append("session-ses_compaction", "any", [
          {
            id: "evt_raw_checked",
            type: "ArtifactsChecked",
            version: 1,
            data: {
              _tag: "ArtifactsChecked",
              at: 0,
              markerId: "msg_08",
              artifacts: [
                { kind: "file-read", text: "/repo/config.json", named: false },
                { kind: "command", text: "rg config", named: false },
                { kind: "request", text: "fix the config", named: true },
              ],
            },
          },
        ])
      }).pipe(Effect.provide(EventStore.layerSqlite({ filename: db }))),
    )
    const result = await pivot("inspect", "--db", db, "--session", "ses_compaction")
    expect(result.stdout).toContain(
      "kept: the summary names 1 of 3 artifacts of its span (files read 0/1, commands 0/1, requests 1/1); 2 of 3 in view or recallable\n",
    )
    expect(result.stdout).toContain('not named: file-read "/repo/config.json" · command "rg config"\n')
    expect(result.stdout).toContain('lost: command "rg config"\n')
  })

  it("given --prices, then the ledger bills at those prices; a bad price file is one line, exit 1", async () => {
    const prices = path.join(dir, "prices.json")
    const price = { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 1.25 }
    fs.writeFileSync(prices, JSON.stringify({ "anthropic/claude-sonnet-4": price }))
    const json = JSON.parse(
      (await pivot("inspect", fixture("compaction-tail.json"), "--prices", prices, "--format", "json")).stdout,
    )
    const want = Ledger.fold(importedEvents(fixture("compaction-tail.json")), () => price)
    expect(json.ledger.totals.dollars).toBeCloseTo(Ledger.totals(want).dollars, 12)
    expect(json.ledger.totals.dollars).not.toBeCloseTo(
      Ledger.totals(Ledger.fold(importedEvents(fixture("compaction-tail.json")), (ref) => Config.priceOf(ref))).dollars,
      6,
    )
    const bad = path.join(dir, "bad-prices.json")
    fs.writeFileSync(bad, JSON.stringify({ "anthropic/claude-sonnet-4": { input: -1 } }))
    const refused = await pivot("inspect", fixture("compaction-tail.json"), "--prices", bad)
    expect(refused.code).toBe(1)
    expect(refused.err).toHaveLength(1)
    expect(refused.err[0]).toMatch(/^pivot inspect: .*bad-prices\.json: expected \{ "provider\/model"/)
  })

  it("given a price file whose key is not provider/model, then it is refused naming the key, not skipped", async () => {
    const prices = path.join(dir, "no-provider.json")
    const price = { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 1.25 }
    fs.writeFileSync(prices, JSON.stringify({ "claude-sonnet-4": price }))
    const refused = await pivot("inspect", fixture("compaction-tail.json"), "--prices", prices)
    expectOneLineFailure(
      refused,
      "inspect",
      /no-provider\.json: expected \{ "provider\/model".*key "claude-sonnet-4" is not provider\/model/,
    )
    // A missing field says which.
    fs.writeFileSync(prices, JSON.stringify({ "anthropic/claude-sonnet-4": { input: 1, output: 2 } }))
    const missing = await pivot("inspect", fixture("compaction-tail.json"), "--prices", prices)
    expectOneLineFailure(missing, "inspect", /Missing key at \["anthropic\/claude-sonnet-4"\]\["cacheRead"\]/)
  })

  it("given a database, then its read models report exactly what the export's fold reports", async () => {
    for (const name of ["compaction-tail.json", "pruned.json", "overflow-replay.json", "summary-failed.json"]) {
      const db = freshDb()
      expect((await pivot("import", fixture(name), "--db", db)).code).toBe(0)
      const fromDb = JSON.parse((await pivot("inspect", "--db", db, "--format", "json")).stdout)
      const fromFile = JSON.parse((await pivot("inspect", fixture(name), "--format", "json")).stdout)
      expect({ ...fromDb, source: "" }).toEqual({ ...fromFile, source: "" })
    }
  })
})
