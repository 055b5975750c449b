// Bundles what a person waits for (ADR 0033): the `pivot` command and the OpenCode plugin's session-time code, each
// from its compiled JavaScript in dist/ (what `tsc -b` emitted and checked) into dist/bundle/ with rolldown,
// tree-shaken, with one chunk per dynamic import, so a command still loads only its own code. `effect`, zod and the
// rest of the dependencies are bundled too (hundreds of modules become a few files); Node's and Bun's built-in modules
// stay outside, and so does what is optional at run time (`pg-native`). The plugin has two entries sharing their
// chunks (one copy of zod): its tools' descriptions and argument shapes, which its lazy entry loads at OpenCode's
// start, and its hooks. Run by scripts/build.mjs after `tsc -b` (so by `npm install`); plain JavaScript, like it.
import { existsSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { build } from "rolldown"
import { catalogAsJson } from "./bundle-catalog.mjs"

const root = fileURLToPath(new URL("..", import.meta.url))

/** What is bundled: a package and its compiled entries (in dist/), each bundled to dist/bundle/ under its own name. */
export const bundles = [
  { name: "cli", entries: ["bin.js"] },
  { name: "opencode-plugin", entries: ["Tools.js", "Plugin.js"] },
]

const builtIn = /^(node:|bun:)/

// `import { Events, Ids } from "@pivot/core"` in the other packages' compiled code becomes one import per module of
// core (its index re-exports each module as a namespace, nothing else): through the index, a command's chunk reached
// every module of core whether it used it or not (issue 32, ADR 0062).
const coreDist = join(root, "packages", "core", "dist")
const byModule = ["cli", "store"].map((name) => join(root, "packages", name, "dist"))
const coreByModule = () => ({
  name: "pivot-core-by-module",
  transform: {
    filter: { code: "@pivot/core" },
    handler(code, id) {
      if (!byModule.some((dir) => id.startsWith(dir))) return undefined
      return code.replace(/import\s*\{([^}]*)\}\s*from\s*"@pivot\/core";?/g, (_, names) =>
        names
          .split(",")
          .map((name) => name.trim())
          .filter((name) => name !== "")
          .map((name) => {
            const [imported, local = imported] = name.split(/\s+as\s+/)
            if (!existsSync(join(coreDist, `${imported}.js`)))
              throw new Error(`@pivot/core has no module ${imported} (${id})`)
            return `import * as ${local} from ${JSON.stringify(join(coreDist, `${imported}.js`))};`
          })
          .join(""),
      )
    },
  },
})

for (const bundle of bundles) {
  const dist = join(root, "packages", bundle.name, "dist")
  const dir = join(dist, "bundle")
  rmSync(dir, { recursive: true, force: true })
  await build({
    input: bundle.entries.map((entry) => join(dist, entry)),
    platform: "node",
    external: (id) => builtIn.test(id) || id === "pg-native",
    // The model catalog as one JSON string rather than object literals (bundle-catalog.mjs, ADR 0056).
    plugins: [catalogAsJson(), coreByModule()],
    logLevel: "warn",
    output: {
      dir,
      format: "esm",
      // No source maps: with the sources' text they are four times the code; names are kept instead (below).
      sourcemap: false,
      // Whitespace and dead code go; names stay, so stack traces and `constructor.name` read as in the source.
      minify: { compress: true, mangle: false, codegen: { removeWhitespace: true } },
      entryFileNames: "[name].js",
      chunkFileNames: "[name]-[hash].js",
    },
  })
}
// The CLI's help and version texts, printed by effect/cli now from the same compiled code and written beside the
// bundle's entry, so `pivot --help` answers without loading effect/cli (packages/cli/src/Precomputed.ts, ADR 0037).
const cli = join(root, "packages", "cli")
const { precompute } = await import(pathToFileURL(join(cli, "dist", "Precompute.js")).href)
writeFileSync(join(cli, "dist", "bundle", "precomputed.json"), JSON.stringify(await precompute(cli)))
console.log(`bundle: ${bundles.map((b) => `packages/${b.name}/dist/bundle`).join(", ")}`)
