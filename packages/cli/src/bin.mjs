#!/usr/bin/env node
// The installed `pivot` command. Plain JavaScript that any Node can parse, so an old Node gets a clear message
// instead of a syntax or missing-module error; then it loads the bundled entry (dist/bundle/bin.js, ADR 0033) through
// the package's own exports. In the repository, `node --conditions=@pivot/source` makes that import load src/bin.ts.
const [major, minor] = process.versions.node.split(".").map(Number)
if (major < 22 || (major === 22 && minor < 16)) {
  console.error(
    `pivot needs Node >= 22.16 (its SQLite store uses node:sqlite with busy timeouts), but this is Node ${process.versions.node}.\n` +
      "Install a newer Node (22.16+ or 24) and run the command again.",
  )
  process.exit(1)
}
// Node 22 warns on every run that node:sqlite is experimental; the command's output is not the place for that.
const emitWarning = process.emitWarning
process.emitWarning = function (warning, ...rest) {
  if (String(warning).startsWith("SQLite is an experimental feature")) return
  return emitWarning.call(this, warning, ...rest)
}
// Node keeps the compiled code of the bundle's files on disk between runs (its compile cache): 20-30 ms of CPU less per
// command. In the user's own cache folder (compileCache.mjs), never the install; a folder that cannot be written only
// means no cache (Node reports it and throws nothing). NODE_DISABLE_COMPILE_CACHE=1 turns it off (docs/cli.md).
const { enableCompileCache } = await import("node:module")
const { compileCacheDir } = await import("./compileCache.mjs")
const cacheDir = compileCacheDir(process.env, process.platform)
if (cacheDir !== undefined) {
  try {
    enableCompileCache?.(cacheDir)
  } catch {
    // A cache is an optimisation: the command runs the same without it.
  }
}
// An import decodes and appends a big export: it runs in a child Node started with the flags that keep its peak
// memory low (importFlags.mjs; V8 takes them only at start-up). The variable marks the child; its exit code is ours.
if (process.argv[2] === "import" && process.env.PIVOT_IMPORT_CHILD === undefined) {
  const { spawnSync } = await import("node:child_process")
  const { IMPORT_NODE_FLAGS } = await import("./importFlags.mjs")
  const result = spawnSync(process.execPath, [...IMPORT_NODE_FLAGS, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: "inherit",
    env: { ...process.env, PIVOT_IMPORT_CHILD: "1" },
  })
  process.exit(result.status ?? 1)
}
await import("@pivot/cli/bin")
