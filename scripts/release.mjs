// The release tarballs, until pivot is published: a clean build of every package, then `npm pack` of each into one
// folder (default release/ at the repository root, emptied first), one .tgz per package. An app installs them all
// with its own effect and ai (pivot's peer dependencies): `npm install <pivot>/release/*.tgz ai effect`.
// Prints the tarballs' paths, one per line. Plain JavaScript, so it needs no build to start.
//
//   npm run release [-- --out DIR]
import { spawnSync } from "node:child_process"
import { mkdirSync, rmSync } from "node:fs"
import { join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))

/** Builds and packs every package into `out`; answers npm's pack report (name, filename, files) per package. */
export const release = (out = join(root, "release"), env = process.env) => {
  rmSync(out, { recursive: true, force: true })
  mkdirSync(out, { recursive: true })
  const built = spawnSync(process.execPath, [join(root, "scripts/build.mjs"), "--clean"], { stdio: "inherit", env })
  if (built.status !== 0) throw new Error(`release: the build failed (exit ${built.status ?? built.signal})`)
  const packed = spawnSync(
    "npm",
    ["pack", "--workspaces", "--ignore-scripts", "--json", "--loglevel=error", "--pack-destination", out],
    { cwd: root, encoding: "utf8", env, maxBuffer: 64 * 1024 * 1024 },
  )
  if (packed.status !== 0) throw new Error(`release: npm pack failed: ${packed.stderr.trim().split("\n")[0]}`)
  return JSON.parse(packed.stdout)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2)
  const out = args.includes("--out") ? resolve(args[args.indexOf("--out") + 1]) : undefined
  try {
    for (const p of release(out)) console.log(join(out ?? join(root, "release"), p.filename))
  } catch (error) {
    console.error(String(error?.message ?? error))
    process.exit(1)
  }
}
