/**
 * `pivot demo`, in process, on a temporary SQLite file: the bundled session played by the scripted model through the
 * AI SDK and pivot's runtime. What it stores, what it prints, and whether the replay commands it prints show exactly
 * what the model was sent.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { LanguageModelV4Prompt } from "@ai-sdk/provider"
import { Events, type ModelMessage, Overflow, Session, Tokens, Window } from "@pivot/core"
import { Sessions } from "@pivot/runtime"
import { EventStore } from "@pivot/store"
import { Effect, Result, Stream } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { run } from "../src/Cli.ts"
import type { Io } from "../src/commands/Command.ts"
import * as Demo from "../src/demo/Demo.ts"
import * as Example from "../src/demo/Example.ts"
import type { Logged } from "../src/demo/Narrator.ts"
import { plain } from "../src/demo/Style.ts"

type Event = Events.Event

const example = Example.load(Example.bundledPath)
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pivot-demo-"))
const db = path.join(dir, "demo.db")
const lines: Array<string> = []
const warnings: Array<string> = []
let outcome: Demo.Outcome
let stored: ReadonlyArray<{ readonly type: string; readonly stream: string; readonly event: Event }>

/** Every event of the database, decoded as the runtime decodes them. */
const readAll = (file: string) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* EventStore
      const recorded = yield* Stream.runCollect(store.readAll())
      return Array.from(recorded, (r) => {
        const decoded = Sessions.decodeEvent(r.stream.replace(/^session-/, ""), r)
        if (Result.isFailure(decoded)) throw decoded.failure
        return { type: r.type, stream: r.stream, event: decoded.success }
      })
    }).pipe(Effect.provide(EventStore.layerSqlite({ filename: file }))),
  )

beforeAll(async () => {
  outcome = await Demo.run({
    example,
    db,
    out: (line) => lines.push(line),
    warn: (line) => warnings.push(line),
    style: plain,
    width: 100,
  })
  stored = await readAll(db)
}, 60_000)

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

const tags = () => outcome.events.map((l) => l.event._tag)
const countOf = (tag: Event["_tag"]) => tags().filter((t) => t === tag).length
const text = () => lines.join("\n")

/** A model call as pivot recorded it: a step, or a refusal. */
const isCall = (l: Logged) =>
  (l.event._tag === "AssistantStepRecorded" && l.event.message.summary !== true) ||
  l.event._tag === "ProviderErrorReported"

/**
 * A prompt reduced to what the model reads, so the provider-level prompt the scripted model received and pivot's
 * rendered window can be compared: role, then each part's kind and content (system messages aside).
 */
type Canonical = ReadonlyArray<{ readonly role: string; readonly parts: ReadonlyArray<string> }>

const part = (p: { readonly type: string } & Record<string, unknown>): string => {
  switch (p.type) {
    case "text":
    case "reasoning":
      return `${p.type}:${p.text as string}`
    case "tool-call":
      return `call:${p.toolCallId as string}:${p.toolName as string}:${JSON.stringify(p.input)}`
    case "tool-result": {
      const output = p.output as { readonly type: string; readonly value?: unknown }
      return `result:${p.toolCallId as string}:${p.toolName as string}:${output.type}:${JSON.stringify(output.value)}`
    }
    default:
      return p.type
  }
}

const canonicalPrompt = (prompt: LanguageModelV4Prompt): Canonical =>
  prompt.flatMap((m) => (m.role === "system" ? [] : [{ role: m.role, parts: m.content.map((p) => part(p as never)) }]))

const canonicalWindow = (messages: ReadonlyArray<ModelMessage.ModelMessage>): Canonical =>
  messages.flatMap((m) =>
    m.role === "system"
      ? []
      : [
          {
            role: m.role,
            parts: typeof m.content === "string" ? [`text:${m.content}`] : m.content.map((p) => part(p as never)),
          },
        ],
  )

/** The window at stream version `version`, folded from the stored events. */
const windowAt = (version: number) =>
  Window.render(Session.fold(outcome.events.filter((l) => l.version <= version).map((l) => l.event)).window).map(
    (r) => r.message,
  )

/** The replay commands the demo printed: `[label, version]`. */
const printedVersions = (): ReadonlyArray<number> =>
  lines.flatMap((line) => {
    const match = /npx pivot window --db (\S+) --session (\S+) --at (\d+)$/.exec(line.trim())
    return match === null ? [] : [Number(match[3])]
  })

describe("given the bundled example, when the demo runs on a temporary SQLite file", () => {
  it("then the session pivots at least twice, prunes at least once, continues, replays and waits", () => {
    expect(countOf("SummaryFinished")).toBeGreaterThanOrEqual(2)
    expect(countOf("PartCompacted")).toBeGreaterThanOrEqual(1)
    expect(countOf("ContinueRequested")).toBeGreaterThanOrEqual(1)
    expect(countOf("TurnReplayed")).toBeGreaterThanOrEqual(1)
    expect(countOf("AutoContinueSkipped")).toBeGreaterThanOrEqual(1)
    expect(countOf("SummaryFailed")).toBe(0)
    expect(countOf("CompactionAbandoned")).toBe(0)
    expect(outcome.error).toBeUndefined()
  })

  it("then every event in the database decodes, and the session's are the ones narrated, versions 1…n in order", () => {
    const mine = stored.filter((s) => s.stream === Events.streamName(outcome.sessionId))
    expect(mine.length).toBe(outcome.events.length)
    expect(mine.map((s) => s.event)).toEqual(outcome.events.map((l) => l.event))
    expect(outcome.events.map((l) => l.version)).toEqual(outcome.events.map((_, i) => i + 1))
    for (const s of stored) expect(Events.decode(Events.encode(s.event))).toEqual(s.event)
  })

  it("then each model call is one recorded step or refusal, with the usage the scripted model measured", () => {
    const calls = outcome.events.filter(isCall)
    const received = outcome.model!.calls
    expect(calls.length).toBe(received.length)
    for (const [i, logged] of calls.entries()) {
      const call = received[i]!
      if (logged.event._tag === "ProviderErrorReported") {
        expect(call.rejected).toBeDefined()
        expect(logged.event.overflow).toBe(true)
      } else if (logged.event._tag === "AssistantStepRecorded") {
        expect(call.rejected).toBeUndefined()
        expect(logged.event.message.tokens.input).toBe(call.inputTokens)
        expect(logged.event.message.tokens.output).toBe(call.outputTokens)
      }
    }
  })

  it("then the usage is measured, not written: input tokens follow the prompt, and pivots shrink it", () => {
    const received = outcome.model!.calls
    for (const call of received) {
      expect(call.inputTokens).toBeGreaterThan(Tokens.estimate(JSON.stringify(call.prompt)))
      expect(call.inputTokens).toBeLessThan(Tokens.estimate(JSON.stringify(call.prompt)) + 2_000)
    }
    const trigger = Overflow.trigger(example.config, example.model.limits)!
    for (const pivot of outcome.pivots.filter((p) => p.called)) {
      const after = outcome.events.findIndex((l) => l.version === pivot.after + 1)
      const index = outcome.events.filter(isCall).indexOf(outcome.events[after]!)
      expect(received[index]!.inputTokens).toBeLessThan(trigger / 3)
    }
  })

  it("then every printed replay version is the window a model call was sent, exactly", () => {
    const versions = printedVersions()
    expect(versions.length).toBe(2 * outcome.pivots.length)
    const calls = outcome.events.filter(isCall)
    let compared = 0
    for (const version of versions) {
      const next = outcome.events.find((l) => l.version === version + 1)
      // The last pivot's "after" may be the window no call has been sent yet: the session's newest version.
      if (next === undefined) {
        expect(version).toBe(outcome.events.length)
        continue
      }
      expect(isCall(next)).toBe(true)
      const prompt = outcome.model!.calls[calls.indexOf(next)]!.prompt
      expect(canonicalWindow(windowAt(version))).toEqual(canonicalPrompt(prompt))
      compared++
    }
    expect(compared).toBeGreaterThanOrEqual(2 * outcome.pivots.length - 1)
  })

  it("then `pivot window` run with the printed arguments prints those same windows", async () => {
    const calls = outcome.events.filter(isCall)
    for (const version of printedVersions()) {
      const printed = capture()
      const code = await run(
        ["window", "--db", db, "--session", outcome.sessionId, "--at", String(version), "--format", "json"],
        printed.io,
      )
      expect(printed.err).toEqual([])
      expect(code).toBe(0)
      const shown = (JSON.parse(printed.out.join("\n")) as { messages: Array<{ message: ModelMessage.ModelMessage }> })
        .messages
      expect(canonicalWindow(shown.map((r) => r.message))).toEqual(canonicalWindow(windowAt(version)))
      const next = outcome.events.find((l) => l.version === version + 1)
      if (next !== undefined)
        expect(canonicalWindow(shown.map((r) => r.message))).toEqual(
          canonicalPrompt(outcome.model!.calls[calls.indexOf(next)]!.prompt),
        )
    }
  })

  it("then the output shows the usage bar, the prune, pivot, continue, replay and wait lines, and the commands", () => {
    const out = text()
    expect(out).toMatch(/^ {2}\[[#-]{20}\] +\d+% of usable 56,000 · +[\d,]+ tokens · /m)
    expect(out).toMatch(/^ {2}✂ prune: \d+ old tool outputs? cleared, [\d,]+ tokens/m)
    for (let n = 1; n <= outcome.pivots.length; n++)
      expect(out).toMatch(new RegExp(`^ {2}◆ pivot ${n}: [\\d,]+ messages summarised, \\d+ kept verbatim`, "m"))
    expect(out).toContain('  ↻ continue: "Continue if you have next steps')
    expect(out).toContain("  ⟲ replay: the refused request is sent again after the summary")
    expect(out).toContain("  ⏸ no continue message: the agent had finished its turn and waits for the user")
    expect(out).toContain("  ✗ the provider refused the call: This model's maximum context length is 64000 tokens.")
    expect(out).toContain("  ◇ pivot's extractive summary stands in: the compaction model failed")
    expect(out).toContain(`    npx pivot inspect --db ${db} --session ${outcome.sessionId}`)
    expect(out).not.toContain("\u001b[")
    expect(lines.slice(-30).join("\n")).toMatch(/npx pivot window --db .* --at \d+/)
  })

  it("then its numbers are the events': prune tokens, pivot count, event count", () => {
    const pruned = outcome.events.reduce((sum, l) => sum + (l.event._tag === "PartCompacted" ? l.event.tokens : 0), 0)
    const prunes = lines.filter((l) => l.startsWith("  ✂ prune: "))
    const printed = prunes.reduce(
      (sum, l) => sum + Number(/cleared, ([\d,]+) tokens/.exec(l)![1]!.replace(/,/g, "")),
      0,
    )
    expect(printed).toBe(pruned)
    expect(lines.filter((l) => l.startsWith("  ◆ pivot ")).length).toBe(countOf("SummaryFinished"))
    expect(text()).toContain(`· ${outcome.events.length} events`)
    // Each step line's count is the usage pivot recorded for that call.
    const steps = outcome.events.flatMap((l) =>
      l.event._tag === "AssistantStepRecorded" && l.event.message.summary !== true
        ? [Tokens.contextCount(l.event.message.tokens)]
        : [],
    )
    const bars = lines.flatMap((l) => {
      const match = /^ {2}\[[#-]{20}\] +\d+% of usable 56,000 · +([\d,]+) tokens/.exec(l)
      return match === null ? [] : [Number(match[1]!.replace(/,/g, ""))]
    })
    expect(bars).toEqual(steps)
  })

  it("then pivot's warning (the summary that fell back) is one plain line: no logger timestamp, level or fiber", () => {
    expect(countOf("SummaryFallbackUsed")).toBeGreaterThan(0)
    expect(warnings).toHaveLength(countOf("SummaryFallbackUsed"))
    for (const warning of warnings) {
      expect(warning).toMatch(/^pivot: session ses_\S+, compaction msg_\S+: the summariser's summary was replaced/)
      expect(warning).not.toMatch(/timestamp=|level=|fiber=/)
    }
  })

  it("then lines fit a 100-column terminal", () => {
    const long = lines.filter((l) => [...l].length > 100 && !l.includes("npx pivot"))
    expect(long).toEqual([])
  })

  it("then a second run adds a fresh session to the same database and leaves the first intact", async () => {
    const again = await Demo.run({ example, db, out: () => {}, style: plain, width: 100 })
    expect(again.sessionId).not.toBe(outcome.sessionId)
    expect(again.events.map((l) => l.event._tag)).toEqual(tags())
    const all = await readAll(db)
    expect(all.filter((s) => s.stream === Events.streamName(outcome.sessionId)).length).toBe(outcome.events.length)
    expect(all.filter((s) => s.stream === Events.streamName(again.sessionId)).length).toBe(again.events.length)
  }, 60_000)
})

/** An `Io` that records what a command writes. */
const capture = (isTTY = false, env: Record<string, string> = {}) => {
  const out: Array<string> = []
  const err: Array<string> = []
  const io: Io = { out: (l) => out.push(l), err: (l) => err.push(l), isTTY, columns: undefined, env }
  return { io, out, err }
}

describe("the demo command", () => {
  const file = () => path.join(dir, `cmd-${Math.random().toString(36).slice(2)}.db`)

  it("given --db, then it exits 0, leaves the database and prints the replay commands for it", async () => {
    const target = file()
    const { io, out, err } = capture()
    expect(await run(["demo", "--db", target], io)).toBe(0)
    expect(err).toEqual([])
    expect(fs.existsSync(target)).toBe(true)
    expect(out.join("\n")).toMatch(
      new RegExp(`npx pivot window --db ${target.replace(/[.]/g, "\\.")} --session ses_\\S+ --at \\d+`),
    )
  }, 60_000)

  it("given --json, then every line is one of the session's events, decodable, in order", async () => {
    const { io, out, err } = capture()
    expect(await run(["demo", "--json", "--db", file()], io)).toBe(0)
    expect(err).toEqual([])
    const decoded = out.map((line) => Events.decode(JSON.parse(line)))
    expect(decoded.map((e) => e._tag)).toEqual(tags())
  }, 60_000)

  it("given a terminal, then the output is coloured; NO_COLOR turns colour off", async () => {
    const tty = capture(true)
    await run(["demo", "--db", file()], tty.io)
    expect(tty.out.join("\n")).toContain("\u001b[")
    const noColor = capture(true, { NO_COLOR: "1" })
    await run(["demo", "--db", file()], noColor.io)
    expect(noColor.out.join("\n")).not.toContain("\u001b[")
  }, 60_000)

  it("given a missing example file, then it explains and exits with 1", async () => {
    const { io, err } = capture()
    expect(await run(["demo", "--example", "/nonexistent/session.json", "--db", file()], io)).toBe(1)
    expect(err.join("\n")).toContain("cannot read example /nonexistent/session.json")
  })
})
