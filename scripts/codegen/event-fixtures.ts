/**
 * Writes a golden JSON fixture for every event type at its current version that has none yet
 * (`packages/core/test/fixtures/events/<Type>.v<N>.json`), and one per variant of `sampleVariants`
 * (`<Type>.v<N>.<variant>.json`). Existing fixtures are never rewritten: they are the proof
 * that data stored by an old release still decodes. Run: `node scripts/codegen/event-fixtures.ts`.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Events } from "@pivot/core"
import { sampleEvents, sampleVariants } from "./sample-events.ts"

const dir = join(import.meta.dirname, "../../packages/core/test/fixtures/events")
mkdirSync(dir, { recursive: true })
for (const { event, variant } of [...sampleEvents.map((event) => ({ event, variant: "" })), ...sampleVariants]) {
  const file = join(dir, `${event._tag}.v${Events.versions[event._tag]}${variant === "" ? "" : `.${variant}`}.json`)
  if (existsSync(file)) continue
  writeFileSync(file, `${JSON.stringify(Events.encode(event), null, 2)}\n`)
  console.log(`wrote ${file}`)
}
