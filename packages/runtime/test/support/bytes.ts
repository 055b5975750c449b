/** Searching a SQLite store's files for secrets: what "never reaches disk" and "not recoverable" are checked with. */
import * as fs from "node:fs"

/** Every form of a secret that could sit in a file: as is, JSON-escaped, base64 (of the text and of its JSON form). */
export const formsOf = (secret: string): ReadonlyArray<string> => {
  const escaped = JSON.stringify(secret).slice(1, -1)
  // A private key's body lines are secret on their own (the BEGIN/END lines are not).
  const lines = secret.split("\n").filter((line) => line.length >= 16 && !line.startsWith("-----"))
  return [
    ...new Set([
      secret,
      escaped,
      ...lines,
      Buffer.from(secret).toString("base64"),
      Buffer.from(escaped).toString("base64"),
    ]),
  ]
}

/** The bytes of the database and its WAL and shared-memory files, as one latin1 string per file. */
export const fileBytes = (filename: string): ReadonlyArray<{ readonly file: string; readonly bytes: string }> =>
  [filename, `${filename}-wal`, `${filename}-shm`]
    .filter((file) => fs.existsSync(file))
    .map((file) => ({ file, bytes: fs.readFileSync(file).toString("latin1") }))
