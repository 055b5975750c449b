// Builds what the packages ship: `tsc -b` over every packages/*/tsconfig.build.json (JavaScript, `.d.ts` and source
// maps into each package's dist/), then rewrites the relative `.ts` specifiers that TypeScript keeps in declaration
// files to `.js`, so a consumer's compiler sees ordinary NodeNext imports, and bundles the `pivot` command and the
// OpenCode plugin's session-time code into their dist/bundle/ (bundle.mjs, ADR 0033). Plain JavaScript: it runs
// before anything is built, on any supported Node. `--clean` removes dist/ and the build info first.
import { spawnSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const packages = readdirSync(join(root, "packages")).filter((name) =>
  existsSync(join(root, "packages", name, "tsconfig.build.json")),
)

if (process.argv.includes("--clean")) {
  rmSync(join(root, ".tsbuild/dist"), { recursive: true, force: true })
  for (const name of packages) rmSync(join(root, "packages", name, "dist"), { recursive: true, force: true })
}

const tsc = join(root, "node_modules/.bin/tsc")
const configs = packages.map((name) => join(root, "packages", name, "tsconfig.build.json"))
const built = spawnSync(tsc, ["-b", ...configs], { stdio: "inherit" })
if (built.status !== 0) {
  console.error(`build: tsc -b failed (exit ${built.status ?? built.signal})`)
  process.exit(1)
}

// `from "./X.ts"`, `import("../Y.ts")`, `import "./Z.ts"`: same length after the rewrite, so declaration maps stay right.
const relativeTs = /((?:from|import)\s*\(?\s*)(["'])(\.\.?\/[^"']*?)\.ts\2/g
const walk = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? walk(join(dir, entry.name)) : [join(dir, entry.name)],
  )
let rewritten = 0
for (const name of packages) {
  for (const file of walk(join(root, "packages", name, "dist")).filter((f) => f.endsWith(".d.ts"))) {
    const text = readFileSync(file, "utf8")
    const next = text.replace(relativeTs, (_, head, quote, stem) => `${head}${quote}${stem}.js${quote}`)
    if (next !== text) {
      writeFileSync(file, next)
      rewritten++
    }
  }
}
console.log(
  `build: ${packages.length} packages into packages/*/dist (${rewritten} declaration files' imports rewritten)`,
)
await import("./bundle.mjs")
