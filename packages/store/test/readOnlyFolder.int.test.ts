// A read-only connection to a WAL database in a folder it may not write (a read-only mount, somebody else's folder):
// SQLite cannot make the `-shm` index there, so the driver reads the file as it is (`immutable=1`) when no `-wal` lies
// beside it. Run as a user without write access to the folder: root writes anywhere, so as root the reader is a child
// process under another uid.

import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { DatabaseSync } from "node:sqlite"
import { pathToFileURL } from "node:url"
import { afterAll, describe, expect, it } from "vitest"

const driver = pathToFileURL(path.join(import.meta.dirname, "../src/sqlite/driver.ts")).href
const root = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-read-only-folder-"))
afterAll(() => {
  fs.chmodSync(root, 0o755)
  fs.rmSync(root, { recursive: true, force: true })
})

/** Reads `filename` read-only through the driver in a child process that cannot write its folder. */
const readAsOutsider = (filename: string) => {
  const code = `
    const Driver = await import(${JSON.stringify(driver)})
    try {
      const db = Driver.open(${JSON.stringify(filename)}, { readOnly: true, timeout: 0 })
      console.log(JSON.stringify(db.prepare("SELECT note FROM notes ORDER BY rowid").all().map((row) => row.note)))
      db.close()
    } catch (error) {
      console.log(JSON.stringify({ error: error.message }))
    }`
  const asRoot = process.getuid?.() === 0
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", code], {
    encoding: "utf8",
    ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
  })
  expect(child.stderr).toBe("")
  return JSON.parse(child.stdout) as unknown
}

describe("a read-only open in a folder it may not write", () => {
  it.skipIf(process.platform === "win32")(
    "reads a WAL database with no -wal beside it, and makes nothing beside it",
    () => {
      const folder = path.join(root, "shared")
      fs.mkdirSync(folder)
      const filename = path.join(folder, "pivot.db")
      const writer = new DatabaseSync(filename)
      writer.exec("PRAGMA journal_mode = WAL; CREATE TABLE notes (note TEXT); INSERT INTO notes VALUES ('a'), ('b')")
      writer.close()
      fs.chmodSync(filename, 0o444)
      fs.chmodSync(folder, 0o555)
      fs.chmodSync(root, 0o755)
      const before = fs.readFileSync(filename)

      expect(readAsOutsider(filename)).toEqual(["a", "b"])
      expect(fs.readdirSync(folder)).toEqual(["pivot.db"])
      expect(fs.readFileSync(filename).equals(before)).toBe(true)
    },
  )
})
