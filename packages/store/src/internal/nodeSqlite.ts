// Node's built-in SQLite, loaded when a SQLite database is opened rather than when pivot is imported: importing pivot
// (and using an in-memory store) does not need it, and opening a SQLite file on a Node without it, or without its busy
// timeouts (before 22.16), fails with one line that names the Node it needs instead of a bare
// ERR_UNKNOWN_BUILTIN_MODULE at import time.
import type * as NodeSqlite from "node:sqlite"

/** The oldest Node whose `node:sqlite` has what the store uses (busy timeouts); the packages' engines say the same. */
export const MINIMUM_NODE = "22.16.0"

const parts = (version: string) => version.replace(/^v/, "").split(".").map(Number)

/** Whether `version` is older than `MINIMUM_NODE`. */
export const tooOld = (version: string): boolean => {
  const [a, b] = [parts(version), parts(MINIMUM_NODE)]
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) < (b[i] ?? 0)
  return false
}

/** The one-line reason a SQLite store cannot open on Node `version`. */
export const unsupported = (version: string): string =>
  `pivot's SQLite store needs Node >= 22.16 (node:sqlite with busy timeouts), but this is Node ${version}: ` +
  `run on Node 22.16+ or 24, or use an in-memory store`

/** `node:sqlite`, or an Error with the one-line reason when this Node cannot give it. */
export const load = (version: string = process.versions.node): typeof NodeSqlite => {
  const sqlite = tooOld(version)
    ? undefined
    : (process.getBuiltinModule?.("node:sqlite") as typeof NodeSqlite | undefined)
  if (sqlite === undefined) throw new Error(unsupported(version))
  return sqlite
}
