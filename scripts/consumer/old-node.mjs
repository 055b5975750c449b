// The consumer check on a Node older than pivot's minimum (the machine's system Node): importing every package must work
// (node:sqlite is loaded only when a SQLite store opens), an in-memory store works, and a SQLite file store is refused
// in one line that names the Node it needs.
import * as os from "node:os"
import * as path from "node:path"

for (const name of ["core", "store", "runtime", "ai", "opencode", "server", "cli"]) await import(`@pivot/${name}`)
const { createPivot } = await import("@pivot/ai")
const memory = await createPivot({ model: "openai/gpt-5", store: ":memory:", session: "old-node" })
await memory.close()
try {
  await createPivot({ model: "openai/gpt-5", store: path.join(os.tmpdir(), `pivot-old-node-${process.pid}.db`) })
  console.log("FAILED: a SQLite store opened on this Node")
} catch (error) {
  const message = String(error?.message ?? error)
  if (message.includes("\n") || !message.includes("Node >= 22.16")) console.log(`FAILED: ${JSON.stringify(message)}`)
  else console.log(`old node ok: ${message}`)
}
