/**
 * Where bin.mjs puts Node's compile cache (compileCache.mjs): the user's own cache folder on each platform, nothing
 * when there is no absolute home or Node's own variables decide, never the system's shared temporary folder.
 */
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { compileCacheDir } from "../src/compileCache.mjs"

const tail = path.join("pivot", "node-compile-cache")

describe("compileCacheDir", () => {
  it("given Linux, then $XDG_CACHE_HOME when it is absolute, else ~/.cache", () => {
    expect(compileCacheDir({ HOME: "/home/ada", XDG_CACHE_HOME: "/var/cache/ada" }, "linux")).toBe(
      path.join("/var/cache/ada", tail),
    )
    expect(compileCacheDir({ HOME: "/home/ada" }, "linux")).toBe(path.join("/home/ada/.cache", tail))
    // A relative XDG_CACHE_HOME is invalid (the XDG spec): it would put the cache wherever the command runs.
    expect(compileCacheDir({ HOME: "/home/ada", XDG_CACHE_HOME: "cache" }, "linux")).toBe(
      path.join("/home/ada/.cache", tail),
    )
    expect(compileCacheDir({ HOME: "/home/ada", XDG_CACHE_HOME: "" }, "freebsd")).toBe(
      path.join("/home/ada/.cache", tail),
    )
  })

  it("given macOS, then ~/Library/Caches", () => {
    expect(compileCacheDir({ HOME: "/Users/ada", XDG_CACHE_HOME: "/x" }, "darwin")).toBe(
      path.join("/Users/ada/Library/Caches", tail),
    )
  })

  it("given Windows, then %LOCALAPPDATA%, else the profile's AppData\\Local", () => {
    const local = "/c/Users/ada/AppData/Local"
    expect(compileCacheDir({ LOCALAPPDATA: local, USERPROFILE: "/c/ada" }, "win32")).toBe(path.join(local, tail))
    expect(compileCacheDir({ USERPROFILE: "/c/ada" }, "win32")).toBe(path.join("/c/ada", "AppData", "Local", tail))
    expect(compileCacheDir({ HOME: "/c/ada" }, "win32")).toBeUndefined()
  })

  it("given no absolute home, then no cache (not the shared temporary folder)", () => {
    expect(compileCacheDir({}, "linux")).toBeUndefined()
    expect(compileCacheDir({ HOME: "" }, "linux")).toBeUndefined()
    expect(compileCacheDir({ HOME: "home/ada" }, "linux")).toBeUndefined()
    expect(compileCacheDir({ HOME: "home/ada" }, "darwin")).toBeUndefined()
  })

  it("given NODE_DISABLE_COMPILE_CACHE or NODE_COMPILE_CACHE, then none: Node's own variables decide", () => {
    expect(compileCacheDir({ HOME: "/home/ada", NODE_DISABLE_COMPILE_CACHE: "1" }, "linux")).toBeUndefined()
    expect(compileCacheDir({ HOME: "/home/ada", NODE_COMPILE_CACHE: "/tmp/c" }, "linux")).toBeUndefined()
    expect(compileCacheDir({ HOME: "/home/ada", NODE_COMPILE_CACHE: "" }, "linux")).toBe(
      path.join("/home/ada/.cache", tail),
    )
  })
})
