// Regenerates the OpenCode oracle fixtures (packages/opencode/test/fixtures/oracle/): runs each scenario against the
// real OpenCode binary (the `opencode-ai` devDependency) with the scripted loopback model, and writes what OpenCode
// sent and its export. Offline; a few minutes per scenario.
//   npm run oracle:capture                 every scenario
//   npm run oracle:capture -- prune        only the named ones
import { capture } from "./capture.ts"
import { writeCapture } from "./fixtures.ts"
import { scenarios } from "./scenarios.ts"

const wanted = process.argv.slice(2)
const unknown = wanted.filter((name) => !scenarios.some((s) => s.name === name))
if (unknown.length > 0) {
  console.error(`unknown scenario(s): ${unknown.join(", ")}; known: ${scenarios.map((s) => s.name).join(", ")}`)
  process.exit(2)
}
for (const scenario of scenarios) {
  if (wanted.length > 0 && !wanted.includes(scenario.name)) continue
  const started = Date.now()
  const captured = await capture(scenario, (line) => console.log(line))
  writeCapture(captured, new Date().toISOString())
  const kinds = captured.requests.map((r) => r.kind[0]).join("")
  console.log(`${scenario.name}: ${captured.requests.length} requests (${kinds}) in ${Date.now() - started} ms`)
}
