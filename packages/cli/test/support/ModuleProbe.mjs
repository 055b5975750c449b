// Preloaded with `node --import` by bundle.int.test.ts: prints every module Node's loader loads, one
// `loaded <url>` line each on standard error when the process exits.
import { registerHooks } from "node:module"

const loaded = []
registerHooks({
  load(url, context, next) {
    loaded.push(url)
    return next(url, context)
  },
})
process.on("exit", () => {
  for (const url of loaded) process.stderr.write(`loaded ${url}\n`)
})
