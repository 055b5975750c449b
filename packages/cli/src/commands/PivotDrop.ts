/**
 * `pivot inspect --pivot N`: what pivot N's summary replaced, as `context_recall` lists it for the model (core's
 * `Recall.dropped`): the messages of its head with their recall ids and sizes, and the files, commands and errors in
 * them. Read-only; a pivot the session does not have is a one-line error.
 */
import { Conversation, Recall, Session } from "@pivot/core"
import * as Effect from "effect/Effect"
import { CliError } from "./Command.ts"
import type { Opened } from "./Source.ts"

/** What pivot `n` (0: the latest) of an opened session dropped; fails with a `CliError` when it has no such pivot. */
export const droppedOf = (opened: Opened, n: number) =>
  Effect.gen(function* () {
    const state = Session.fold((yield* opened.log).map((l) => l.event))
    const pivots = Recall.sessionPivots(state)
    const pivot = pivots[(n === 0 ? pivots.length : n) - 1]
    if (pivot === undefined) return yield* new CliError({ message: Recall.noPivot(n, pivots.length) })
    return Recall.dropped(pivot, (id) => Conversation.get(state.window.conversation, id))
  })
