/**
 * pivot's packages and the app must share one copy of `effect` (it is a peer dependency of every package): a schema
 * built by one copy is not understood by another, and the decode then fails with a misleading message (`Expected an
 * integer at ["context"]` for limits that are integers). Each package registers the copy it loaded, in a registry on
 * `globalThis` that every copy of this module shares, so the failure can name its real cause.
 */
import * as Schema from "effect/Schema"

const KEY = Symbol.for("@pivot/core/EffectCopies")

/** Each loaded copy of effect (its `effect/Schema` module) → the packages that loaded it. */
const registry = (): Map<object, Array<string>> => {
  const global = globalThis as { [KEY]?: Map<object, Array<string>> }
  global[KEY] ??= new Map()
  return global[KEY]
}

/** Records that `pkg` loaded the copy of effect whose `effect/Schema` module is `schemaModule`. */
export const register = (pkg: string, schemaModule: object): void => {
  const packages = registry().get(schemaModule) ?? []
  if (!packages.includes(pkg)) registry().set(schemaModule, [...packages, pkg])
}

register("@pivot/core", Schema)

/** `undefined` with one copy of effect loaded; else one line naming the copies and what to do. */
export const problem = (): string | undefined => {
  const copies = [...registry().values()]
  if (copies.length < 2) return undefined
  return (
    `${copies.length} copies of effect are loaded (${copies.map((packages) => packages.join(", ")).join(" | ")}), ` +
    "and a schema of one is not understood by another: install one copy (`npm ls effect` shows them; effect is a " +
    "peer dependency of every @pivot package)"
  )
}
