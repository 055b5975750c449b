/**
 * The files the pages load, read once from this package: the viewer's own script and style (`assets/`) and the
 * bundled chart library (uPlot, from the package's dependencies; no CDN, so the viewer works offline). Served by
 * name from this fixed list only: no request path ever reaches the file system.
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"

/** A file the viewer serves. */
export interface Asset {
  readonly bytes: Uint8Array
  readonly contentType: string
}

// From the package's root as Node resolves it, not from this module's place: the same code runs from src/, dist/ and
// inside the `pivot` command's bundle (ADR 0033).
const packageJson = createRequire(import.meta.url).resolve("@pivot/server/package.json")
const require = createRequire(packageJson)
const own = (name: string) => path.join(path.dirname(packageJson), "assets", name)

const files: Readonly<Record<string, { readonly path: () => string; readonly contentType: string }>> = {
  "app.js": { path: () => own("app.js"), contentType: "text/javascript; charset=utf-8" },
  "style.css": { path: () => own("style.css"), contentType: "text/css; charset=utf-8" },
  "uPlot.iife.min.js": {
    path: () => require.resolve("uplot/dist/uPlot.iife.min.js"),
    contentType: "text/javascript; charset=utf-8",
  },
  "uPlot.min.css": { path: () => require.resolve("uplot/dist/uPlot.min.css"), contentType: "text/css; charset=utf-8" },
}

const loaded = new Map<string, Asset>()

/** The asset of that name, or `undefined` when the list has none (any other name, any path). */
export const get = (name: string): Asset | undefined => {
  if (!Object.hasOwn(files, name)) return undefined
  let asset = loaded.get(name)
  if (asset === undefined) {
    const file = files[name]!
    asset = { bytes: fs.readFileSync(file.path()), contentType: file.contentType }
    loaded.set(name, asset)
  }
  return asset
}

/** The names of every asset. */
export const names: ReadonlyArray<string> = Object.keys(files)
