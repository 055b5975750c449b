/**
 * The worker's entry (option `worker`, ADR 0073): serves the hooks to OpenCode's thread (Thread.ts). The hooks load
 * as on one thread — `#hooks`, the bundle once built — on the first message, so the bench's phases time them alike.
 */
import { parentPort } from "node:worker_threads"
import * as Phases from "./Phases.ts"
import { serve } from "./Thread.ts"

if (parentPort !== null)
  serve(parentPort, (input, options) =>
    Phases.timed("bundle", () => import("#hooks")).then((plugin) =>
      Phases.timed("make", () => plugin.make(input, options)),
    ),
  )
