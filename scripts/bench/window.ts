/**
 * Benchmark: the cost of folding one more event into the window (and the full Decider state) after 1k, 10k and
 * 100k events of history. The target is a flat cost (≤ 1.5× from 1k to 100k). Run: `npm run bench:window`
 * (node --expose-gc scripts/bench/window.ts). Numbers vary with the machine; compare ratios, not absolutes.
 */
import { type Events, Ids, type Message, Session, Window } from "@pivot/core"

type Event = Events.Event
const msg = (n: number) => Ids.unsafe.message(`msg_${String(n).padStart(10, "0")}`)
const prt = (n: number) => Ids.unsafe.part(`prt_${String(n).padStart(10, "0")}`)
const model = { providerId: "bench", modelId: "bench" }

/** A deterministic stream shaped like an agent loop: user turn, two tool-using steps, a prune now and then. */
const makeEvents = (count: number): Array<Event> => {
  const events: Array<Event> = [{ _tag: "SessionStarted", sessionId: Ids.unsafe.session("ses_bench"), at: 0 }]
  let n = 0
  let user = msg(0)
  const tools: Array<{ messageId: Message.AssistantMessage["id"]; partId: ReturnType<typeof prt> }> = []
  while (events.length < count) {
    const kind = events.length % 8
    n++
    if (kind === 1) {
      user = msg(n)
      events.push({
        _tag: "UserMessageAdded",
        at: n,
        message: { role: "user", id: user, createdAt: n, parts: [{ type: "text", id: prt(n), text: `request ${n}` }] },
      })
    } else if (kind === 7 && tools.length > 0) {
      const target = tools.shift()!
      events.push({ _tag: "PartCompacted", at: n, messageId: target.messageId, partId: target.partId, tokens: 500 })
    } else {
      const id = msg(n)
      tools.push({ messageId: id, partId: prt(n * 10 + 1) })
      events.push({
        _tag: "AssistantStepRecorded",
        at: n,
        message: {
          role: "assistant",
          id,
          parentId: user,
          createdAt: n,
          model,
          tokens: { input: 1000, output: 50, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
          finish: "tool-calls",
          parts: [
            { type: "text", id: prt(n * 10), text: "Reading the file." },
            {
              type: "tool",
              id: prt(n * 10 + 1),
              callId: `call_${n}`,
              tool: "read",
              state: {
                status: "completed",
                input: { filePath: `src/f${n}.ts` },
                output: `line ${n}\n`.repeat(50),
                title: "read",
              },
            },
          ],
        },
      })
    }
  }
  return events
}

const gc = (globalThis as { gc?: () => void }).gc
const measured = 20_000
const rows: Array<{ history: number; windowUs: number; sessionUs: number; heapMb: number }> = []

// Warm the JIT on a throwaway fold so the first size measured is not charged for compilation.
Session.fold(makeEvents(30_000))

for (const history of [1_000, 10_000, 100_000]) {
  const events = makeEvents(history + measured)
  const before = events.slice(0, history)
  const after = events.slice(history)
  // Each sample extends a freshly folded state once, as a live session does (no branching from an old state).
  const time = async (fold: () => { extend: () => void }) => {
    const samples: Array<number> = []
    for (let rep = 0; rep < 5; rep++) {
      const { extend } = fold()
      gc?.()
      // Let the collector's background threads finish, so they do not compete with the sample (2-core machines).
      await new Promise((resolve) => setTimeout(resolve, 100))
      const start = performance.now()
      extend()
      samples.push(((performance.now() - start) * 1000) / measured)
    }
    return samples.sort((a, b) => a - b)[2]!
  }
  const windowUs = await time(() => {
    let state = Window.fold(before)
    return {
      extend: () => {
        for (const event of after) state = Window.evolve(state, event)
      },
    }
  })
  const sessionUs = await time(() => {
    let state = Session.fold(before)
    return {
      extend: () => {
        for (const event of after) state = Session.evolve(state, event)
      },
    }
  })
  gc?.()
  const heapMb = process.memoryUsage().heapUsed / 2 ** 20
  rows.push({ history, windowUs, sessionUs, heapMb })
}

console.log("history events | window fold µs/event | session fold µs/event | heap after (MiB)")
for (const r of rows)
  console.log(
    `${String(r.history).padStart(14)} | ${r.windowUs.toFixed(2).padStart(19)} | ${r.sessionUs.toFixed(2).padStart(21)} | ${r.heapMb.toFixed(1).padStart(16)}`,
  )
const first = rows[0]!
const last = rows[rows.length - 1]!
console.log(
  `growth 1k → 100k: window ×${(last.windowUs / first.windowUs).toFixed(2)}, session ×${(last.sessionUs / first.sessionUs).toFixed(2)} (target ≤ 1.5)`,
)
console.log(`peak RSS: ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MiB`)
