// Copies a bench:restart file and rewrites its snapshots' checksums as this version writes them (`Snapshot.checksum`,
// ADR 0059): to compare a build before ADR 0059 with one after on the same rows, each reading the checksum its own
// version writes (a file written before makes a later build check the old SHA-256, loading `node:crypto`).
//   node --conditions=@pivot/source scripts/bench/support/rechecksum.ts FROM.db TO.db
import * as fs from "node:fs"
import { DatabaseSync } from "node:sqlite"
import { Snapshot } from "@pivot/store"

const [from, to] = process.argv.slice(2)
if (from === undefined || to === undefined) {
  console.error("usage: rechecksum.ts FROM.db TO.db")
  process.exit(2)
}
fs.copyFileSync(from, to)
const db = new DatabaseSync(to)
const rows = db.prepare("SELECT stream, data FROM pivot_snapshots").all() as Array<{ stream: string; data: string }>
const update = db.prepare("UPDATE pivot_snapshots SET checksum = ? WHERE stream = ?")
for (const { stream, data } of rows) update.run(Snapshot.checksum(data), stream)
db.close()
console.log(`${to}: ${rows.length} snapshot checksums rewritten`)
