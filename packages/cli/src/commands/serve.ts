/**
 * `pivot serve [store | export.json | postgres://…] [--port N] [--host ADDR] [--token T] [--usable N]`: the read-only
 * web viewer (`@pivot/server`). Binds 127.0.0.1 unless `--host` names another address, which then needs an access
 * token (generated and printed unless given). Runs until interrupted (Ctrl-C).
 */
import { Serve } from "@pivot/server"
import { type Command, Exit, parseOptions, UsageError } from "./Command.ts"
import { describe } from "./Source.ts"

const integer = (value: string | undefined, name: string, max: number): number | undefined => {
  if (value === undefined) return undefined
  if (!/^\d+$/.test(value) || Number(value) > max) throw new UsageError(`--${name} needs an integer from 0 to ${max}`)
  return Number(value)
}

/** The `serve` command. */
export const serve: Command = {
  name: "serve",
  args: "[db | export.json | postgres://URL] [--port N] [--host ADDR] [--token T] [--usable TOKENS]",
  summary: "a read-only web viewer: sessions, usage timeline, the window at any version, diffs, pivot reports, events",
  run: async (args, io) => {
    const options = parseOptions(args, { values: ["port", "host", "token", "usable"], flags: [], positionals: 1 })
    const port = integer(options.values.port, "port", 65535)
    const usable = integer(options.values.usable, "usable", Number.MAX_SAFE_INTEGER)
    let running: Serve.Started
    try {
      running = await Serve.start({
        source: options.positionals[0],
        port,
        host: options.values.host,
        token: options.values.token,
        usable,
      })
    } catch (error) {
      io.err(`pivot serve: ${describe(error)}`)
      return Exit.failure
    }
    io.out(`pivot serve: ${running.source} on ${running.url}`)
    if (running.token !== undefined) io.out(`access token: ${running.token} (the address above carries it)`)
    io.out("read-only; press Ctrl-C to stop")
    await new Promise<void>((resolve) => {
      process.once("SIGINT", resolve)
      process.once("SIGTERM", resolve)
    })
    await running.close()
    return Exit.ok
  },
}
