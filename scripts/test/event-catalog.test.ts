import { readFileSync } from "node:fs"
import { join } from "node:path"
import { expect, it } from "vitest"
import { renderCatalog } from "../codegen/event-catalog.ts"

it("docs/events.md is generated from the current event schemas (run scripts/codegen/event-catalog.ts)", () => {
  expect(readFileSync(join(import.meta.dirname, "../../docs/events.md"), "utf8")).toBe(renderCatalog())
})
