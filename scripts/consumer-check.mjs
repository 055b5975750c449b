// The consumer check: pivot as a user gets it from npm. Builds every package, packs it, installs the tarballs with
// plain npm into a temporary app outside the repository that already has its own effect, and checks there, on Node 22
// (the oldest release `engines` allows) and on Node 24:
//   - the app has exactly one copy of effect (and of ai, @effect/*): they are pivot's peer dependencies; an app on an
//     effect outside their range is refused by npm instead of getting a second copy, and a second copy forced in
//     either works or is named as such by the error it causes;
//   - a plain .mjs imports each package;
//   - a strict NodeNext .ts consumer type-checks against the shipped .d.ts (skipLibCheck false, no
//     allowImportingTsExtensions), then runs: one real turn on SQLite through the public API;
//   - `npx pivot --help`, `npx pivot --version` and `npx pivot demo` run, and `npx pivot serve` answers over HTTP;
// plus what the tarballs hold (compiled code, no tests, no tsconfig) and, on a too-old Node, the bin's message and a
// SQLite store's one-line refusal (importing pivot and an in-memory store work there).
// Prints one line per check and ends with "consumer check: N passed, N failed"; `--report FILE` also writes the
// counts as JSON (.ci/run adds them to its total). Plain JavaScript, so it needs no build to start.
//
//   npm run consumer-check [-- --keep] [-- --report FILE]
import { spawnSync } from "node:child_process"
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, dirname, join, relative, sep } from "node:path"
import { fileURLToPath } from "node:url"
import { release } from "./release.mjs"

const root = fileURLToPath(new URL("..", import.meta.url))
const args = process.argv.slice(2)
const keep = args.includes("--keep")
const reportFile = args.includes("--report") ? args[args.indexOf("--report") + 1] : undefined

const packages = readdirSync(join(root, "packages"))
  .map((dir) => ({ dir, json: JSON.parse(readFileSync(join(root, "packages", dir, "package.json"), "utf8")) }))
  .filter((p) => p.json.private !== true)
const version = packages.find((p) => p.json.name === "@pivot/cli")?.json.version
// The oldest Node the packages claim to support, read from engines (">=22.16.0" → 22.16.0).
const minimumNode = packages[0].json.engines.node.replace(/^>=\s*/, "")

// Children run as a user's shell would: no npm-script variables, no NODE_OPTIONS (the repo's source condition must
// not leak into the app), no repository folders on PATH.
const cleanEnv = (nodeDir) => {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key) && key !== "NODE_OPTIONS" && key !== "INIT_CWD"),
  )
  const path = (process.env.PATH ?? "").split(delimiter).filter((entry) => entry && !`${entry}${sep}`.startsWith(root))
  env.PATH = [nodeDir, ...path].filter(Boolean).join(delimiter)
  env.NO_COLOR = "1"
  return env
}

const exec = (command, commandArgs, options = {}) => {
  const result = spawnSync(command, commandArgs, {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    ...options,
    env: options.env ?? cleanEnv(dirname(process.execPath)),
  })
  return { status: result.status, stdout: result.stdout ?? "", stderr: result.stderr ?? "", error: result.error }
}
const firstLine = (text) =>
  text
    .split("\n")
    .map((l) => l.trim())
    .find((l) => l.length > 0) ?? ""
// npm's own warnings (e.g. about this machine's npmrc) and Node's are not what a check is about.
const withoutNpmWarnings = (text) =>
  text
    .split("\n")
    .filter((l) => !/^npm warn|ExperimentalWarning|--trace-warnings/.test(l))
    .join("\n")
const describe = (r) =>
  r.error
    ? String(r.error.message)
    : `exit ${r.status}: ${firstLine(withoutNpmWarnings(r.stderr)) || firstLine(r.stdout)}`

let passed = 0
let failed = 0
const check = (name, fn) => {
  try {
    const problem = fn()
    if (problem) throw new Error(problem)
    passed++
    console.log(`ok     ${name}`)
  } catch (error) {
    failed++
    console.log(
      `FAILED ${name}: ${String(error?.message ?? error)
        .split("\n")
        .slice(0, 6)
        .join("\n       ")}`,
    )
  }
}
// Setup that every later check needs: a failure here ends the run (counted once).
const must = (name, fn) => {
  const before = failed
  check(name, fn)
  if (failed > before) finish()
}
const finish = () => {
  console.log(`consumer check: ${passed} passed, ${failed} failed`)
  if (reportFile) writeFileSync(reportFile, JSON.stringify({ passed, failed }))
  if (!keep) rmSync(work, { recursive: true, force: true })
  else console.log(`kept ${work}`)
  process.exit(failed === 0 ? 0 : 1)
}

const work = mkdtempSync(join(tmpdir(), "pivot-consumer-"))
if (relative(root, work).split(sep)[0] !== "..") throw new Error(`the temporary app ${work} is inside the repository`)
const tarballs = join(work, "tarballs")
const app = join(work, "app")
mkdirSync(tarballs)
mkdirSync(app)
console.log(`consumer check in ${work} (pivot ${version}; Node ${minimumNode} and ${process.versions.node})`)

// The tarballs a user gets, made as `npm run release` makes them (a clean build, then npm pack of every package).
must(`release: ${packages.length} packages built and packed`, () => {
  const packed = release(tarballs, cleanEnv(dirname(process.execPath)))
  if (packed.length !== packages.length) return `packed ${packed.length}, expected ${packages.length}`
  const bad = packed.flatMap((p) =>
    p.files
      .map((f) => f.path)
      .filter((f) => /(^|\/)test\/|\.test\.|tsconfig|vitest\.config|\.tsbuildinfo/.test(f))
      .map((f) => `${p.name}: ${f}`),
  )
  if (bad.length > 0) return `tarballs hold files users must not get: ${bad.slice(0, 5).join(", ")}`
  for (const p of packed) {
    const files = new Set(p.files.map((f) => f.path))
    const json = packages.find((q) => q.json.name === p.name).json
    const entry = json.exports["."]
    // What Node loads installed: every export's `import` and every "imports" target's `default` (the bundles of the
    // bin and the plugin's hooks, ADR 0033).
    const loaded = [...Object.values(json.exports), ...Object.values(json.imports ?? {})]
      .map((target) => (typeof target === "object" ? (target.import ?? target.default) : undefined))
      .filter((target) => typeof target === "string" && target.endsWith(".js"))
      .map((target) => target.slice(2))
    for (const needed of ["LICENSE", "README.md", entry.types.slice(2), entry.import.slice(2), ...loaded])
      if (!files.has(needed)) return `${p.name} lacks ${needed}`
  }
})

const node22Home = join(tmpdir(), `pivot-node-${minimumNode}`)
const node22 = join(node22Home, "node_modules/.bin/node")
must(`Node ${minimumNode} (the npm package node@${minimumNode}, cached in ${node22Home})`, () => {
  if (!existsSync(node22)) {
    mkdirSync(node22Home, { recursive: true })
    writeFileSync(
      join(node22Home, "package.json"),
      JSON.stringify({ private: true, allowScripts: { node: true } }, null, 2),
    )
    const r = exec("npm", ["install", "--no-audit", "--no-fund", `node@${minimumNode}`], { cwd: node22Home })
    if (r.status !== 0) return describe(r)
  }
  const r = exec(node22, ["--version"])
  return r.stdout.trim() === `v${minimumNode}` ? undefined : `node --version said ${describe(r)}`
})

// The versions the repository develops against: the app installs the same, as its own dependencies.
const effectVersion = JSON.parse(readFileSync(join(root, "node_modules/effect/package.json"), "utf8")).version
const aiVersion = JSON.parse(readFileSync(join(root, "node_modules/ai/package.json"), "utf8")).version
const peers = [...new Set(packages.flatMap((p) => Object.keys(p.json.peerDependencies ?? {})))].sort()

must(`the app has its own effect ${effectVersion} and ai ${aiVersion}`, () => {
  writeFileSync(
    join(app, "package.json"),
    JSON.stringify({ name: "pivot-consumer", version: "1.0.0", private: true, type: "module" }, null, 2),
  )
  const r = exec("npm", ["install", "--no-audit", "--no-fund", `effect@${effectVersion}`, `ai@${aiVersion}`], {
    cwd: app,
  })
  return r.status === 0 ? undefined : describe(r)
})

must("npm install the tarballs into the app", () => {
  const typesNode = JSON.parse(readFileSync(join(root, "node_modules/@types/node/package.json"), "utf8")).version
  const files = readdirSync(tarballs).map((f) => join(tarballs, f))
  // The AI SDK's declarations import `json-schema` types that it lists only as its own devDependency: a strict
  // (skipLibCheck false) app using `ai` installs them itself, and so does this one.
  const r = exec(
    "npm",
    ["install", "--no-audit", "--no-fund", ...files, `@types/node@${typesNode}`, "@types/json-schema@7.0.15"],
    {
      cwd: app,
    },
  )
  return r.status === 0 ? undefined : describe(r)
})
cpSync(join(root, "scripts/consumer"), app, { recursive: true })

/** Every installed copy of `name` under the app: its top-level folder and any nested node_modules/<name>. */
const copiesOf = (name) => {
  const found = []
  const walk = (modules) => {
    if (!existsSync(modules)) return
    if (existsSync(join(modules, name, "package.json"))) found.push(relative(app, join(modules, name)))
    for (const entry of readdirSync(modules, { withFileTypes: true })) {
      if (!entry.isDirectory() || entry.name === ".bin") continue
      const scoped = entry.name.startsWith("@")
        ? readdirSync(join(modules, entry.name)).map((n) => join(modules, entry.name, n))
        : [join(modules, entry.name)]
      for (const dir of scoped) walk(join(dir, "node_modules"))
    }
  }
  walk(join(app, "node_modules"))
  return found
}

check(`one copy of each peer (${peers.join(", ")}): the app's own, none nested under a package`, () => {
  const wrong = peers
    .map((name) => [name, copiesOf(name)])
    .filter(([name, found]) => found.length !== 1 || found[0] !== join("node_modules", name))
  if (wrong.length > 0) return wrong.map(([name, found]) => `${name}: ${found.join(", ") || "none"}`).join("; ")
  // npm's own view agrees: one effect, every @pivot package's deduplicated onto it.
  const ls = exec("npm", ["ls", "effect", "--all", "--parseable"], { cwd: app })
  const paths = [...new Set(ls.stdout.split("\n").filter(Boolean))]
  return ls.status === 0 && paths.length === 1 ? undefined : `npm ls effect: ${paths.join(", ") || describe(ls)}`
})

check("an app on an effect outside pivot's range is refused by npm (ERESOLVE), not given a second copy", () => {
  const other = join(work, "other-app")
  mkdirSync(other)
  // effect 4.0.x is below the peer range (^4.1.0): npm must say so instead of nesting 4.1 under each package.
  writeFileSync(
    join(other, "package.json"),
    JSON.stringify({ name: "other", version: "1.0.0", private: true, dependencies: { effect: "4.0.6" } }, null, 2),
  )
  const files = readdirSync(tarballs).map((f) => join(tarballs, f))
  const r = exec("npm", ["install", "--dry-run", "--no-audit", "--no-fund", ...files], { cwd: other })
  return r.status !== 0 && /ERESOLVE/.test(r.stderr) && /effect/.test(r.stderr)
    ? undefined
    : `npm install exited ${r.status}: ${firstLine(withoutNpmWarnings(r.stderr)) || firstLine(r.stdout)}`
})

check("shipped declarations import .js, never .ts", () => {
  const walk = (dir) =>
    readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(join(dir, e.name)) : e.name.endsWith(".d.ts") ? [join(dir, e.name)] : [],
    )
  const offenders = walk(join(app, "node_modules/@pivot")).filter((f) =>
    /(?:from|import)\s*\(?\s*["']\.\.?\/[^"']*\.ts["']/.test(readFileSync(f, "utf8")),
  )
  return offenders.length === 0 ? undefined : `relative .ts imports in ${offenders.slice(0, 3).join(", ")}`
})

// The repository's own compiler (TypeScript 7); the app has no TypeScript flags of pivot's.
check("strict NodeNext .ts consumer type-checks against the .d.ts and compiles", () => {
  const r = exec(join(root, "node_modules/.bin/tsc"), ["-p", "tsconfig.json"], { cwd: app })
  return r.status === 0 ? undefined : `tsc: ${r.stdout.split("\n").slice(0, 5).join(" | ")}`
})

const pivotBin = join(app, "node_modules/.bin/pivot")
for (const [label, node] of [
  [`Node ${minimumNode}`, node22],
  [`Node ${process.versions.node}`, process.execPath],
]) {
  const env = cleanEnv(dirname(node))
  const inApp = { cwd: app, env }
  check(`${label}: a plain .mjs imports every package`, () => {
    const r = exec(node, ["imports.mjs"], inApp)
    return r.status === 0
      ? undefined
      : r.stdout
          .split("\n")
          .filter((l) => l.includes("FAILED"))
          .join("; ") || describe(r)
  })
  check(`${label}: one real turn on SQLite through the public API`, () => {
    const r = exec(node, ["out/turn.js"], inApp)
    return r.status === 0 && r.stdout.includes("turn ok") ? undefined : describe(r)
  })
  check(`${label}: npx pivot --help`, () => {
    const r = exec("npx", ["--no-install", "pivot", "--help"], inApp)
    if (r.status !== 0) return describe(r)
    return /usage/i.test(r.stdout) && /\bdemo\b/.test(r.stdout) && /\bimport\b/.test(r.stdout)
      ? undefined
      : `help lacks usage or commands: ${firstLine(r.stdout)}`
  })
  check(`${label}: npx pivot --version`, () => {
    const r = exec("npx", ["--no-install", "pivot", "--version"], inApp)
    if (r.status !== 0) return describe(r)
    return r.stdout.includes(version) ? undefined : `printed ${firstLine(r.stdout)}, expected ${version}`
  })
  check(`${label}: npx pivot demo`, () => {
    const db = join(work, `demo-${node === node22 ? "22" : "24"}.db`)
    const r = exec("npx", ["--no-install", "pivot", "demo", "--db", db], inApp)
    if (r.status !== 0) return describe(r)
    if (!existsSync(db)) return `no database at ${db}`
    return /pivot 1:/.test(r.stdout) ? undefined : `the demo formed no pivot: ${firstLine(r.stdout)}`
  })
  check(`${label}: npx pivot serve on the demo's database answers over HTTP`, () => {
    const db = join(work, `demo-${node === node22 ? "22" : "24"}.db`)
    const r = exec(node, ["serve.mjs", db], inApp)
    return r.status === 0 && r.stdout.includes("serve ok") ? undefined : firstLine(r.stdout) || describe(r)
  })
}

// Whether two copies break a turn depends on effect's release: with 4.1.0 a schema of one copy fails the other's decode
// (`Expected an integer` for integer limits), from 4.1.5 (npm's newest in range on 4 Dec 2026) it decodes. Either the
// turn works, or it fails naming the copies: never the misleading message.
const appEffect = JSON.parse(readFileSync(join(app, "node_modules/effect/package.json"), "utf8")).version
check(
  `a second copy of effect ${appEffect} forced under @pivot/runtime: the turn works, or fails naming the copies`,
  () => {
    const nested = join(app, "node_modules/@pivot/runtime/node_modules/effect")
    cpSync(join(app, "node_modules/effect"), nested, { recursive: true })
    try {
      const r = exec(process.execPath, ["out/turn.js"], { cwd: app })
      if (r.status === 0) return r.stdout.includes("turn ok") ? undefined : `the turn said nothing: ${describe(r)}`
      const line = r.stderr.split("\n").find((l) => l.includes("copies of effect"))
      return line !== undefined ? undefined : `the error does not name the copies: ${firstLine(r.stderr)}`
    } finally {
      rmSync(join(app, "node_modules/@pivot/runtime/node_modules"), { recursive: true, force: true })
    }
  },
)

// The machines' system Node is older than 22: the bin must say what it needs instead of failing to parse.
const systemNode = "/usr/bin/node"
const systemMajor = existsSync(systemNode)
  ? Number(exec(systemNode, ["-p", "process.versions.node.split('.')[0]"]).stdout)
  : 0
if (systemMajor > 0 && systemMajor < 22)
  check(`Node ${systemMajor} (system): pivot explains the Node it needs and exits 1`, () => {
    const r = exec(systemNode, [pivotBin, "--help"], { cwd: app, env: cleanEnv(dirname(systemNode)) })
    return r.status === 1 && r.stderr.includes(`Node >= ${minimumNode.replace(/\.0$/, "")}`) ? undefined : describe(r)
  })
if (systemMajor > 0 && systemMajor < 22)
  check(
    `Node ${systemMajor} (system): every package imports, @pivot/ai runs in memory; a SQLite store names Node >= 22.16`,
    () => {
      const r = exec(systemNode, ["old-node.mjs"], { cwd: app, env: cleanEnv(dirname(systemNode)) })
      return r.status === 0 && r.stdout.includes("old node ok") ? undefined : firstLine(r.stdout) || describe(r)
    },
  )

finish()
