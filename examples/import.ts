// Importing an OpenCode session: `opencode export <session>` JSON → pivot events, in one pure call (no IO, no clock),
// all or nothing. Run from the repository root: it reads one of the importer's test fixtures.
import { readFileSync } from "node:fs"
import { Session, Window } from "@pivot/core"
import { Import } from "@pivot/opencode"
import { Result } from "effect"

const imported = Import.importText(readFileSync("packages/opencode/test/fixtures/compaction-tail.json", "utf8"))
if (Result.isFailure(imported)) {
  // One line naming the first bad field, e.g. `Invalid OpenCode export at messages[3].parts[1].state.status: …`
  console.error(imported.failure.message)
  process.exit(1)
}
const { sessionId, events, report } = imported.success
const state = Session.fold(events)
const window = Window.render(state.window) // the model input of the next call, as OpenCode would have built it
console.log(`${sessionId}: ${events.length} events, ${window.length} model messages`)
console.log(report) // messages and parts imported, part types dropped, warnings
