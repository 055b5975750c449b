/**
 * The platform services `effect/cli` asks for (its `Environment`: file system, paths, standard streams, terminal,
 * child processes), as `@effect/platform-node`'s `NodeServices.layer` gives them, except that the terminal and the
 * child-process spawner load their Node implementation when first used. None of pivot's commands prompts or spawns
 * through them, and loading them at start (`node:readline`, `node:child_process` and what they pull in, and touching
 * `process.stdin`) cost every command ~25-40 ms of CPU (docs/benchmarks.md, ADR 0037).
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeStdio from "@effect/platform-node/NodeStdio"
import * as Effect from "effect/Effect"
import type * as FileSystem from "effect/FileSystem"
import * as Layer from "effect/Layer"
import type * as Path from "effect/Path"
import * as ChildProcessSpawner from "effect/process/ChildProcessSpawner"
import * as Scope from "effect/Scope"
import * as Terminal from "effect/Terminal"

/** The terminal, built by `NodeTerminal.make` (in this layer's scope) at its first use. */
const lazyTerminal = Layer.effect(
  Terminal.Terminal,
  Effect.gen(function* () {
    const scope = yield* Effect.scope
    const real = yield* Effect.cached(
      Effect.promise(() => import("@effect/platform-node/NodeTerminal")).pipe(
        Effect.flatMap((module) => module.make()),
        Scope.provide(scope),
      ),
    )
    return Terminal.make({
      columns: Effect.flatMap(real, (terminal) => terminal.columns),
      rows: Effect.flatMap(real, (terminal) => terminal.rows),
      size: Effect.flatMap(real, (terminal) => terminal.size),
      readInput: Effect.flatMap(real, (terminal) => terminal.readInput),
      readLine: Effect.flatMap(real, (terminal) => terminal.readLine),
      display: (text) => Effect.flatMap(real, (terminal) => terminal.display(text)),
    })
  }),
)

/** The child-process spawner, `NodeChildProcessSpawner`'s, loaded at the first spawn. */
const lazySpawner = Layer.effect(
  ChildProcessSpawner.ChildProcessSpawner,
  Effect.gen(function* () {
    const context = yield* Effect.context<FileSystem.FileSystem | Path.Path>()
    const real = yield* Effect.cached(
      Effect.promise(() => import("@effect/platform-node/NodeChildProcessSpawner")).pipe(
        Effect.flatMap((module) =>
          Effect.provide(Effect.service(ChildProcessSpawner.ChildProcessSpawner), module.layer).pipe(
            Effect.provideContext(context),
          ),
        ),
      ),
    )
    return ChildProcessSpawner.make((command) => Effect.flatMap(real, (spawner) => spawner.spawn(command)))
  }),
)

/** `NodeServices.layer`'s services, with the terminal and the child-process spawner loaded on first use. */
export const layer = Layer.provideMerge(
  Layer.merge(lazyTerminal, lazySpawner),
  Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, NodeStdio.layer),
)
