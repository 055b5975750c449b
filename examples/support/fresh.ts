// The examples start from an empty store on every run, so running one again prints the same (a real app keeps its
// store: the same session name finds the same session).
import { rmSync } from "node:fs"

/** Removes a SQLite store file and its write-ahead log and index; answers the path. */
export const fresh = (file: string): string => {
  for (const suffix of ["", "-wal", "-shm"]) rmSync(`${file}${suffix}`, { force: true })
  return file
}
