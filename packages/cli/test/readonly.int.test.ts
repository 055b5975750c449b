/**
 * Read commands never write (issue 12, defect 2), `pivot check` finds damage, `pivot rebuild`, limits on a database,
 * and exports in a foreign encoding: each failure one line, each file byte for byte as it was.
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { DatabaseSync } from "node:sqlite"
import { afterAll, describe, expect, it } from "vitest"
import { fixture, pivot, realExport, realSessionId, tempDir } from "./support/audit.ts"

const dir = tempDir()
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))
let files = 0
const fresh = (ext = "db") => path.join(dir, `ro-${++files}.${ext}`)

/** What "unchanged" means: the file's hash and size, and nothing in a write-ahead log. */
const snapshot = (file: string) => ({
  hash: fs.existsSync(file) ? createHash("sha256").update(fs.readFileSync(file)).digest("hex") : "missing",
  size: fs.existsSync(file) ? fs.statSync(file).size : -1,
  walBytes: fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : 0,
  journal: fs.existsSync(`${file}-journal`),
})

const oneLine = (result: Awaited<ReturnType<typeof pivot>>, command: string, pattern: RegExp) => {
  expect(result.code).toBe(1)
  expect(result.out).toEqual([])
  expect(result.err).toHaveLength(1)
  expect(result.err[0]).toMatch(new RegExp(`^pivot ${command}: `))
  expect(result.err[0]).toMatch(pattern)
}

const imported = async () => {
  const db = fresh()
  expect((await pivot("import", realExport, "--db", db)).code).toBe(0)
  return db
}

const readCommands = [
  ["window", "--db"],
  ["inspect", "--db"],
  ["prune", "--dry-run", "--db"],
  ["check", "--db"],
] as const

describe("read commands never create or migrate a store", () => {
  it("given a zero-byte file, then each says it is empty in one line and the file stays 0 bytes, alone", async () => {
    const db = fresh()
    fs.writeFileSync(db, "")
    for (const args of readCommands) {
      const result = await pivot(...args, db)
      oneLine(result, args[0], /is empty \(0 bytes\): not a pivot database$/)
      expect(snapshot(db)).toEqual({ hash: createHash("sha256").digest("hex"), size: 0, walBytes: 0, journal: false })
      expect(fs.readdirSync(dir).filter((name) => name.startsWith(path.basename(db)))).toEqual([path.basename(db)])
    }
  })

  it("given a missing file, then each says so in one line and creates nothing", async () => {
    const db = path.join(dir, "nowhere", "missing.db")
    for (const args of readCommands) {
      oneLine(await pivot(...args, db), args[0], /no database at .*missing\.db/)
      expect(fs.existsSync(path.dirname(db))).toBe(false)
    }
  })

  it("given another program's SQLite database, then each refuses it in one line and it is unchanged", async () => {
    const db = fresh()
    const other = new DatabaseSync(db)
    other.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); INSERT INTO notes (text) VALUES ('mine')")
    other.close()
    const before = snapshot(db)
    for (const args of readCommands.slice(0, 3)) {
      oneLine(await pivot(...args, db), args[0], /not a pivot event store/)
      expect(snapshot(db)).toEqual(before)
    }
  })

  it("given a text file, then each says it is not a SQLite database and the file is unchanged", async () => {
    const db = fresh()
    fs.writeFileSync(db, "hello, not a database\n".repeat(20))
    const before = snapshot(db)
    for (const args of readCommands) {
      const result = await pivot(...args, db)
      expect(result.code).toBe(1)
      expect(result.err).toHaveLength(1)
      expect(result.err[0]).toMatch(/not a (SQLite )?database/)
      expect(snapshot(db)).toEqual(before)
    }
  })

  it("given a pivot database with nothing beside it, then read commands and failing ones leave nothing beside it (issue 32 defect 6)", async () => {
    const db = await imported()
    const beside = () => fs.readdirSync(dir).filter((name) => name.startsWith(`${path.basename(db)}-`))
    expect(beside()).toEqual([])
    const before = snapshot(db)
    for (const args of readCommands) expect((await pivot(...args, db)).code).toBe(0)
    expect(beside()).toEqual([])
    oneLine(await pivot("window", "--db", db, "--session", "ses_nope"), "window", /unknown session ses_nope/)
    expect(beside()).toEqual([])
    expect(snapshot(db)).toEqual(before)
    // A truncated copy: the import refuses it in one line and leaves it alone, nothing made beside it.
    const truncated = fresh()
    fs.writeFileSync(truncated, fs.readFileSync(db).subarray(0, 5_000))
    const damaged = snapshot(truncated)
    oneLine(await pivot("import", realExport, "--db", truncated), "import", /truncated: the header says/)
    expect(fs.readdirSync(dir).filter((name) => name.startsWith(`${path.basename(truncated)}-`))).toEqual([])
    expect(snapshot(truncated)).toEqual(damaged)
  })

  it("given a pivot database, then window, inspect, prune and check leave it byte for byte as it was", async () => {
    const db = await imported()
    const before = snapshot(db)
    for (const args of readCommands) expect((await pivot(...args, db)).code).toBe(0)
    expect(snapshot(db)).toEqual(before)
  })
})

describe("pivot check", () => {
  it("given a sound database, then it reports the integrity check and the replay, exit 0", async () => {
    const db = await imported()
    const result = await pivot("check", "--db", db)
    expect(result.code).toBe(0)
    expect(result.out).toEqual([
      `${db} is sound: integrity check ok; 1 session (36 events) replayed; read models of 1 session match a rebuild`,
    ])
  })

  it("given read models that differ from the log (a usage row, a window message), then it lists each, exits 1, and rebuild mends them", async () => {
    const db = await imported()
    const raw = new DatabaseSync(db)
    raw.exec("UPDATE pivot_rm_usage SET calls = calls + 2")
    raw.exec(
      "UPDATE pivot_rm_window SET message = replace(message, '\"text\"', '\"txt\"') WHERE ordinal = (SELECT MAX(ordinal) FROM pivot_rm_window)",
    )
    const { rows } = raw.prepare("SELECT COUNT(*) AS rows FROM pivot_rm_window").get() as { rows: number }
    raw.close()
    const before = snapshot(db)
    const result = await pivot("check", "--db", db)
    expect(result.code).toBe(1)
    expect(result.out).toEqual([
      `read models: session ${realSessionId}: window: 1 of ${rows} rows differ from a fold of the log (first at ordinal ${rows - 1})`,
      `read models: session ${realSessionId}: usage: 1 of 1 rows differ from a fold of the log`,
    ])
    expect(result.err).toEqual([
      `pivot check: ${db}: the read models of 1 session of 1 differ from a rebuild (listed above); pivot rebuild rewrites them from the log`,
    ])
    expect(snapshot(db)).toEqual(before)
    expect((await pivot("rebuild", "--db", db)).code).toBe(0)
    expect((await pivot("check", "--db", db)).code).toBe(0)
  })

  it("given a damaged page, then it lists the problems, exits 1 in one stderr line, and leaves the file as it was", async () => {
    const db = await imported()
    const bytes = fs.readFileSync(db)
    const pageSize = bytes.readUInt16BE(16)
    // Page 3 onward hold tables and indexes: overwrite the header of a b-tree page in the middle of the file.
    const page = Math.floor(bytes.length / pageSize / 2)
    bytes.fill(0xa5, page * pageSize, page * pageSize + 64)
    fs.writeFileSync(db, bytes)
    const before = snapshot(db)
    const result = await pivot("check", "--db", db)
    expect(result.code).toBe(1)
    expect(result.err).toHaveLength(1)
    expect(result.err[0]).toMatch(/^pivot check: .*(is damaged|cannot be replayed|malformed)/)
    // Every problem found is listed on stdout (or, when SQLite cannot even read the schema, named on stderr).
    for (const line of result.out) expect(line).toMatch(/^(integrity|replay): /)
    expect(snapshot(db)).toEqual(before)
  })
})

describe("pivot rebuild", () => {
  it("given a database, then it rewrites the read models and the window reads the same", async () => {
    const db = await imported()
    const window = (await pivot("window", "--db", db, "--format", "json")).stdout
    const result = await pivot("rebuild", "--db", db)
    expect(result.code).toBe(0)
    expect(result.out).toEqual([`rebuilt the read models of 1 session (36 events) in ${db}`])
    expect((await pivot("window", "--db", db, "--format", "json")).stdout).toBe(window)
    oneLine(await pivot("rebuild", "--db", db, "--session", "ses_nobody"), "rebuild", /unknown session ses_nobody/)
  })

  it("given no database, then it creates none", async () => {
    const db = fresh()
    oneLine(await pivot("rebuild", "--db", db), "rebuild", /no database at/)
    expect(fs.existsSync(db)).toBe(false)
  })
})

describe("limits on a database", () => {
  it("given --limit, --tail, --from/--to, then window JSON is the matching slice of the whole window", async () => {
    const db = await imported()
    const all = JSON.parse((await pivot("window", "--db", db, "--format", "json")).stdout).messages
    const json = async (...args: Array<string>) =>
      JSON.parse((await pivot("window", "--db", db, "--format", "json", ...args)).stdout).messages
    expect(await json("--limit", "5")).toEqual(all.slice(0, 5))
    expect(await json("--tail", "5")).toEqual(all.slice(-5))
    expect(await json("--from", "10", "--to", "12")).toEqual(all.slice(9, 12))
    const text = await pivot("window", "--db", db, "--tail", "2")
    expect(text.out.slice(1, 3).map((line) => line.trim().split(/\s+/)[0])).toEqual(["54", "55"])
    expect(text.out.at(-1)).toBe("  (showing 2 of 55 model messages; see --limit, --tail, --from, --to)")
  })

  it("given --from/--to on inspect, then only rows of those stream versions are listed", async () => {
    const report = JSON.parse(
      (await pivot("inspect", realExport, "--format", "json", "--from", "3", "--to", "4")).stdout,
    )
    expect(report.usage.map((u: { version: number }) => u.version)).toEqual([3, 4])
    expect(report.version).toBe(36)
    const tail = JSON.parse((await pivot("inspect", realExport, "--format", "json", "--tail", "1")).stdout)
    expect(tail.usage).toHaveLength(1)
  })

  it("given --limit on prune --dry-run, then the listing is cut and the tokens freed stay the whole", async () => {
    const file = fixture("pruned.json")
    const full = JSON.parse((await pivot("prune", file, "--dry-run", "--format", "json")).stdout)
    const none = JSON.parse((await pivot("prune", file, "--dry-run", "--format", "json", "--limit", "0")).stdout)
    expect(none).toEqual({ parts: [], tokensFreed: full.tokensFreed })
  })
})

describe("exports in another encoding", () => {
  const text = () => fs.readFileSync(fixture("compaction-tail.json"), "utf8")
  const utf16be = (s: string) => Buffer.from(s, "utf16le").swap16()
  const cases: ReadonlyArray<readonly [string, Buffer, RegExp]> = [
    [
      "le-bom",
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text(), "utf16le")]),
      /UTF-16LE \(byte-order mark FF FE\)/,
    ],
    ["be-bom", Buffer.concat([Buffer.from([0xfe, 0xff]), utf16be(text())]), /UTF-16BE \(byte-order mark FE FF\)/],
    ["le", Buffer.from(text(), "utf16le"), /UTF-16LE \(no byte-order mark\)/],
    ["be", utf16be(text()), /UTF-16BE \(no byte-order mark\)/],
  ]
  it("given UTF-16 (LE/BE, with or without a byte-order mark), then import names the encoding and writes nothing", async () => {
    for (const [name, bytes, pattern] of cases) {
      const file = path.join(dir, `utf16-${name}.json`)
      fs.writeFileSync(file, bytes)
      const db = fresh()
      const result = await pivot("import", file, "--db", db)
      oneLine(result, "import", pattern)
      expect(result.err[0]).toContain("not UTF-8")
      expect(fs.existsSync(db)).toBe(false)
      oneLine(await pivot("window", file), "window", pattern)
    }
  })

  it("given UTF-8 with a byte-order mark, then it imports", async () => {
    const file = path.join(dir, "utf8-bom.json")
    fs.writeFileSync(file, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text(), "utf8")]))
    expect((await pivot("window", file, "--format", "json")).code).toBe(0)
  })
})

it("given the real session id, then the database commands name it", () => {
  expect(realSessionId).toMatch(/^ses_/)
})
