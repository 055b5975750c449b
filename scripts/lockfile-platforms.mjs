// Keeps package-lock.json installable with `npm ci` from a registry mirror that serves only some platforms' builds.
//
// Packages such as @biomejs/biome list one optional dependency per platform. When the registry has no build for a
// platform, `npm install` leaves that entry out of the lock, and `npm ci` then refuses the lock as out of sync. An
// entry that names its os/cpu is never fetched on another platform, so adding those entries back is enough.
// Idempotent; run after changing dependencies: `node scripts/lockfile-platforms.mjs`.
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"

const file = join(import.meta.dirname, "..", "package-lock.json")
const lock = JSON.parse(readFileSync(file, "utf8"))
const platform = (name) => {
  // opencode-ai's builds say "windows" where npm's os field says "win32"
  const os = name.includes("windows")
    ? "win32"
    : ["win32", "darwin", "linux", "android", "freebsd"].find((o) => name.includes(o))
  const cpu = ["x64", "arm64", "ia32", "arm"].find((c) => name.includes(`-${c}`))
  return { os, cpu, libc: name.endsWith("-musl") ? "musl" : undefined }
}
let added = 0
for (const [key, entry] of Object.entries(lock.packages)) {
  if (!key.startsWith("node_modules/") || !entry.optionalDependencies) continue
  for (const [dep, version] of Object.entries(entry.optionalDependencies)) {
    const depKey = `node_modules/${dep}`
    if (lock.packages[depKey]) continue
    const { os, cpu, libc } = platform(dep)
    if (!os || !cpu) continue // not a per-platform build: leave it to npm
    lock.packages[depKey] = {
      version: version.replace(/^[\^~]/, ""),
      cpu: [cpu],
      ...(entry.dev ? { dev: true } : {}),
      optional: true,
      os: [os],
      ...(libc ? { libc: [libc] } : {}),
    }
    added++
  }
}
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`)
console.log(`lockfile-platforms: added ${added} platform entr${added === 1 ? "y" : "ies"}`)
