/**
 * pivot's packages and the app must share one copy of `effect` (it is a peer dependency of every package): a schema
 * built by one copy is not understood by another, and the decode then fails with a misleading message (`Expected an
 * integer at ["context"]` for limits that are integers). Each package registers the copy it loaded, in a registry on
 * `globalThis` that every copy of this module shares, so the failure can name its real cause. A copy is known by one
 * value of its `effect/Schema` module, its `String` schema: naming one value rather than the whole module lets a
 * bundler drop the rest of it (the `pivot` command's bundle, ADR 0033).
 */
import * as Schema from "effect/Schema"

const KEY = Symbol.for("@pivot/core/EffectCopies")

/** Each loaded copy of effect (the `String` schema of its `effect/Schema` module) → the packages that loaded it. */
const registry = (): Map<object, Array<string>> => {
  const global = globalThis as { [KEY]?: Map<object, Array<string>> }
  global[KEY] ??= new Map()
  return global[KEY]
}

/** Records that `pkg` loaded the copy of effect whose `effect/Schema` module's `String` schema is `copy`. */
export const register = (pkg: string, copy: Schema.String): void => {
  const packages = registry().get(copy) ?? []
  if (!packages.includes(pkg)) registry().set(copy, [...packages, pkg])
}

register("@pivot/core", Schema.String)

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
