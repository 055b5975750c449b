/**
 * Given / when / then for the session Decider: `given(...events).when(command).then(...events)`,
 * `.thenFails("Tag")` or `.thenNothing()`. Every `then` also checks idempotence: deciding the same command again on
 * the resulting state answers no events.
 */

import { type Commands, type Events, Session } from "@pivot/core"
import { Result } from "effect"
import { expect } from "vitest"

type Command = Commands.Command
type Event = Events.Event

/** Starts a given/when/then case from the events already in the stream. */
export const given = (...events: ReadonlyArray<Event>) => {
  const state = Session.fold(events)
  return {
    state,
    when: (command: Command) => {
      const decision = Session.decide(command, state)
      const events = (): ReadonlyArray<Event> => {
        if (Result.isFailure(decision)) throw new Error(`expected events, got ${JSON.stringify(decision.failure)}`)
        return decision.success
      }
      const assertIdempotent = (emitted: ReadonlyArray<Event>) => {
        const again = Session.decide(command, Session.fold(emitted, state))
        expect(Result.isSuccess(again) ? again.success : again.failure).toEqual([])
      }
      return {
        /** The events the command caused, for custom assertions. */
        events,
        // biome-ignore lint/suspicious/noThenProperty: given/when/then is the convention; this object is never awaited
        then: (...expected: ReadonlyArray<Event>) => {
          expect(events()).toEqual(expected)
          assertIdempotent(expected)
          return Session.fold(expected, state)
        },
        /** Asserts on the emitted events with a callback; returns the state after them. */
        thenMatch: (check: (emitted: ReadonlyArray<Event>) => void) => {
          const emitted = events()
          check(emitted)
          assertIdempotent(emitted)
          return Session.fold(emitted, state)
        },
        thenNothing: () => expect(events()).toEqual([]),
        /** Asserts the command is refused with this error tag (and, when given, this one-line message). */
        thenFails: (tag: string, message?: string) => {
          expect(Result.isFailure(decision)).toBe(true)
          if (Result.isFailure(decision)) {
            expect(decision.failure._tag).toBe(tag)
            if (message !== undefined) expect(decision.failure.message).toBe(message)
          }
        },
      }
    },
  }
}
