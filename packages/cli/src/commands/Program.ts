/**
 * Runs a command written as an Effect: success is its exit code; any failure (or defect) is printed as ONE line,
 * `pivot <command>: <what is wrong>`, and exits with `Exit.failure`.
 */
import { Cause, Effect, Exit as EffectExit } from "effect"
import { Exit, type Io } from "./Command.ts"
import { describe } from "./Source.ts"

/** Runs `program`; prints its failure as one line on standard error. */
export const runProgram = async <E>(name: string, io: Io, program: Effect.Effect<number, E>): Promise<number> => {
  const exit = await Effect.runPromiseExit(program)
  if (EffectExit.isSuccess(exit)) return exit.value
  const failure = Cause.squash(exit.cause)
  io.err(`pivot ${name}: ${describe(failure)}`)
  return Exit.failure
}
