// Where the installed `pivot` keeps Node's compile cache (the compiled code of its bundle, reused by the next run;
// bin.mjs enables it): a folder of the user's own cache, `pivot/node-compile-cache` under `$XDG_CACHE_HOME` (else
// `~/.cache`) on Linux and other Unixes, `~/Library/Caches` on macOS, `%LOCALAPPDATA%` on Windows. Not Node's default,
// the system's temporary folder, which every user of the machine shares (another user could fill it or make it
// unwritable), and never the install, which may be read-only. No cache at all when there is no home to put it in,
// when `NODE_DISABLE_COMPILE_CACHE` is set, or when `NODE_COMPILE_CACHE` is (Node then uses that folder by itself).
// Plain JavaScript: bin.mjs runs it before anything else is loaded.
import * as path from "node:path"

/**
 * The compile cache's folder for this environment and platform, or undefined for none.
 * @param {Readonly<Record<string, string | undefined>>} env
 * @param {string} platform
 * @returns {string | undefined}
 */
export const compileCacheDir = (env, platform) => {
  if (env.NODE_DISABLE_COMPILE_CACHE || env.NODE_COMPILE_CACHE) return undefined
  const absolute = (dir) => (dir && path.isAbsolute(dir) ? dir : undefined)
  const home = absolute(platform === "win32" ? env.USERPROFILE : env.HOME)
  const base =
    platform === "win32"
      ? (absolute(env.LOCALAPPDATA) ?? (home && path.join(home, "AppData", "Local")))
      : platform === "darwin"
        ? home && path.join(home, "Library", "Caches")
        : (absolute(env.XDG_CACHE_HOME) ?? (home && path.join(home, ".cache")))
  return base ? path.join(base, "pivot", "node-compile-cache") : undefined
}
