/**
 * Session fork (issue 10, spec F8): a child forked at version v starts from the parent's window at v, the parent is
 * unchanged, both evolve independently, and replaying the child rebuilds its windows, the inherited part included.
 */
import { ValidWindow, Window } from "@pivot/core"
import { Sessions } from "@pivot/runtime"
import { EventStore, Replay } from "@pivot/store"
import { Effect } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { RUNS } from "../../core/test/support/runs.ts"
import { run, SESSION, services, step, user } from "./support/harness.ts"

const CHILD = "ses_child"
const windowJson = (state: Sessions.State) => ValidWindow.toJson(Window.messages(state.session.window))

const versionOf = (sessionId: string) =>
  Effect.gen(function* () {
    const store = yield* EventStore
    return yield* store.streamVersion(`session-${sessionId}`)
  })

/** A session of user turns and steps whose usage fills the context now and then (so pivots form). */
const session = (usages: ReadonlyArray<number>) =>
  Effect.gen(function* () {
    const { cm } = yield* services
    yield* user("start")
    for (const [i, input] of usages.entries()) {
      if (i % 3 === 2) yield* user(`turn ${i}`)
      yield* step(input, "tool-calls", `cmd ${i}`)
      yield* cm.prepare(SESSION)
    }
  })

describe("fork", () => {
  it("given a session with a pivot, when it is forked now, then the child's window is the parent's and the child names its parent", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        yield* session([10_000, 70_000, 5_000, 20_000])
        const parent = yield* sessions.load(SESSION)
        const forked = yield* cm.fork(SESSION, { into: CHILD })
        const child = yield* sessions.load(CHILD)
        return { parent, forked, child, childEvents: yield* sessions.events(CHILD) }
      }),
    )
    expect(out.parent.runtime.pivots).toBeGreaterThan(0)
    expect(windowJson(out.child)).toBe(windowJson(out.parent))
    expect(out.forked).toEqual({
      sessionId: CHILD,
      parent: SESSION,
      parentVersion: out.parent.session.version,
      version: out.parent.session.version + 1,
      encrypted: false,
    })
    expect(out.childEvents.at(-1)).toMatchObject({ _tag: "SessionForked", parent: SESSION })
    expect(out.childEvents[0]).toMatchObject({ _tag: "SessionStarted", sessionId: CHILD })
    expect(out.child.session.sessionId).toBe(CHILD)
  })

  it("for any generated session and any version v: the child's window is the parent's windowAt(v); appending to either never changes the other; replaying the child rebuilds it", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 80_000 }), { minLength: 1, maxLength: 12 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        async (usages, pick) => {
          const out = await run(
            Effect.gen(function* () {
              const { cm, sessions } = yield* services
              yield* session(usages)
              const head = yield* versionOf(SESSION)
              const v = Math.max(1, Math.min(head, Math.ceil(pick * head)))
              const parentAtV = yield* Replay.windowAt(SESSION, v)
              yield* cm.fork(SESSION, { into: CHILD, at: v })
              const childAtFork = yield* sessions.load(CHILD)
              const parentBefore = windowJson(yield* sessions.load(SESSION))
              // Both go on independently.
              yield* user("only in the child", CHILD)
              const parentAfterChild = windowJson(yield* sessions.load(SESSION))
              const childBefore = windowJson(yield* sessions.load(CHILD))
              yield* user("only in the parent")
              const childAfterParent = windowJson(yield* sessions.load(CHILD))
              const replayed = Sessions.fold(yield* sessions.events(CHILD))
              const live = yield* sessions.load(CHILD)
              return {
                parentAtV: ValidWindow.toJson(Window.messages(parentAtV)),
                childAtFork: windowJson(childAtFork),
                parentBefore,
                parentAfterChild,
                childBefore,
                childAfterParent,
                replayed: windowJson(replayed),
                live: windowJson(live),
                liveRuntime: live.runtime,
                replayedRuntime: replayed.runtime,
              }
            }),
          )
          expect(out.childAtFork).toBe(out.parentAtV)
          expect(out.parentAfterChild).toBe(out.parentBefore)
          expect(out.childAfterParent).toBe(out.childBefore)
          expect(out.childBefore).toContain("only in the child")
          expect(out.replayed).toBe(out.live)
          expect(out.replayedRuntime).toEqual(out.liveRuntime)
        },
      ),
      { ...RUNS, numRuns: Math.min(RUNS.numRuns, 60) },
    )
  })

  it("given a fork of a fork, when it is forked at or before its own fork point, then the grandchild still names every ancestor (issue 18 #11)", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { cm, sessions } = yield* services
        yield* session([10_000, 20_000])
        const head = yield* versionOf(SESSION)
        yield* cm.fork(SESSION, { into: CHILD })
        yield* user("only in the child", CHILD)
        yield* cm.fork(CHILD, { into: "ses_grandchild", at: 2 })
        yield* cm.fork(CHILD, { into: "ses_at_point", at: head })
        const lineage = (id: string) =>
          Effect.map(sessions.events(id), (events) =>
            events.flatMap((e) => (e._tag === "SessionForked" ? [[e.parent, e.parentVersion]] : [])),
          )
        return { head, early: yield* lineage("ses_grandchild"), atPoint: yield* lineage("ses_at_point") }
      }),
    )
    expect(out.early).toEqual([
      [SESSION, 2],
      [CHILD, 2],
    ])
    expect(out.atPoint).toEqual([
      [SESSION, out.head],
      [CHILD, out.head],
    ])
  })

  it("for any tree of forks at any versions: each session's lineage names every ancestor in order, and its window at each named version is that ancestor's", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 80_000 }), { minLength: 1, maxLength: 6 }),
        fc.array(fc.tuple(fc.nat(), fc.double({ min: 0, max: 1, noNaN: true }), fc.boolean()), {
          minLength: 1,
          maxLength: 5,
        }),
        async (usages, forks) => {
          const out = await run(
            Effect.gen(function* () {
              const { cm, sessions } = yield* services
              yield* session(usages)
              // The reference: the fork path of each session, as the test made it.
              const paths = new Map<string, ReadonlyArray<string>>([[SESSION, []]])
              const checks: Array<{ lineage: unknown; path: unknown; windows: Array<[string, string]> }> = []
              for (const [i, [source, pick, grow]] of forks.entries()) {
                const names = [...paths.keys()]
                const from = names[source % names.length]!
                const head = yield* versionOf(from)
                const at = Math.max(1, Math.min(head, Math.ceil(pick * head)))
                const into = `ses_fork${i}`
                yield* cm.fork(from, { into, at })
                paths.set(into, [...paths.get(from)!, from])
                if (grow) yield* user(`only in ${into}`, into)
                const lineage = (yield* sessions.events(into)).flatMap((e) =>
                  e._tag === "SessionForked" ? [{ session: e.parent, version: e.parentVersion }] : [],
                )
                const windows: Array<[string, string]> = []
                for (const l of lineage)
                  windows.push([
                    ValidWindow.toJson(Window.messages(yield* Replay.windowAt(into, l.version))),
                    ValidWindow.toJson(Window.messages(yield* Replay.windowAt(l.session, l.version))),
                  ])
                checks.push({ lineage: lineage.map((l) => l.session), path: paths.get(into), windows })
              }
              return checks
            }),
          )
          for (const check of out) {
            expect(check.lineage).toEqual(check.path)
            for (const [mine, theirs] of check.windows) expect(mine).toBe(theirs)
          }
        },
      ),
      { ...RUNS, numRuns: Math.min(RUNS.numRuns, 40) },
    )
  })

  it("bad input: a missing session, a version out of range, an existing target, an invalid name — each a typed error, nothing written", async () => {
    const out = await run(
      Effect.gen(function* () {
        const { cm } = yield* services
        yield* session([10_000])
        yield* user("other", "ses_other")
        const head = yield* versionOf(SESSION)
        const fail = (effect: Effect.Effect<unknown, { readonly _tag: string; readonly message: string }>) =>
          Effect.flip(effect).pipe(Effect.map((e) => ({ tag: e._tag, message: e.message })))
        const errors = {
          missing: yield* fail(cm.fork("ses_nope", { into: CHILD })),
          zero: yield* fail(cm.fork(SESSION, { into: CHILD, at: 0 })),
          past: yield* fail(cm.fork(SESSION, { into: CHILD, at: head + 1 })),
          fraction: yield* fail(cm.fork(SESSION, { into: CHILD, at: 1.5 })),
          exists: yield* fail(cm.fork(SESSION, { into: "ses_other" })),
          invalid: yield* fail(cm.fork(SESSION, { into: "not an id" })),
        }
        return {
          errors,
          head,
          headAfter: yield* versionOf(SESSION),
          child: yield* versionOf(CHILD),
          other: yield* versionOf("ses_other"),
        }
      }),
    )
    expect(out.errors.missing.tag).toBe("ForkSourceMissing")
    expect(out.errors.zero).toEqual({
      tag: "ForkVersionOutOfRange",
      message: `cannot fork session ${SESSION} at version 0: it has versions 1 to ${out.head}`,
    })
    expect(out.errors.past.tag).toBe("ForkVersionOutOfRange")
    expect(out.errors.fraction.tag).toBe("ForkVersionOutOfRange")
    expect(out.errors.exists.tag).toBe("ForkTargetExists")
    expect(out.errors.invalid.tag).toBe("InvalidSessionId")
    expect(out.headAfter).toBe(out.head)
    expect(out.child).toBe(0)
    expect(out.other).toBe(2)
  })
})
