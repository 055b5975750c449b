/**
 * The platform services the command line runs with (Services.ts): the terminal and the child-process spawner load
 * their Node implementation at first use, and then work as `NodeServices.layer`'s do — a real child process, the
 * real terminal's size.
 */
import * as Effect from "effect/Effect"
import * as ChildProcess from "effect/process/ChildProcess"
import * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import * as Terminal from "effect/Terminal"
import { describe, expect, it } from "vitest"
import * as Services from "../src/Services.ts"

describe("Services.layer", () => {
  it("given a command spawned through it, then Node's spawner runs it: its output and exit code", async () => {
    const program = Effect.gen(function* () {
      const spawner = yield* ChildProcessSpawner.ChildProcessSpawner
      const hello = ChildProcess.make(process.execPath, ["-e", "process.stdout.write('hello from a child')"])
      const failing = ChildProcess.make(process.execPath, ["-e", "process.exit(3)"])
      return { text: yield* spawner.string(hello), code: yield* spawner.exitCode(failing) }
    })
    const { text, code } = await Effect.runPromise(program.pipe(Effect.provide(Services.layer)))
    expect(text).toBe("hello from a child")
    expect(code).toBe(3)
  }, 60_000)

  it("given the terminal asked for its size, then Node's terminal answers (0 columns when not a TTY)", async () => {
    const columns = await Effect.runPromise(
      Effect.flatMap(Effect.service(Terminal.Terminal), (terminal) => terminal.columns).pipe(
        Effect.provide(Services.layer),
      ),
    )
    expect(columns).toBe(process.stdout.isTTY === true ? process.stdout.columns : 0)
  })
})
