/**
 * Shared test data: deterministic message builders and fast-check arbitraries of realistic chronological sessions.
 *
 * Arbitraries build messages with placeholder ids; `sessionArb` renumbers them, so a generated session has unique
 * ascending ids (`msg_00000001`…, `prt_00000001`…), ascending timestamps, and each assistant's `parentId` pointing at
 * the user message before it (a summary's at its marker).
 */
import { type Config, Ids, Message, type Model, type Tokens } from "@pivot/core"
import fc from "fast-check"

type Msg = Message.Message
type UserMessage = Message.UserMessage
type AssistantMessage = Message.AssistantMessage
type AssistantPart = Message.AssistantPart
type UserPart = Message.UserPart
type ToolPart = Message.ToolPart
type ToolCompleted = Message.ToolCompleted

// ---------------------------------------------------------------------------------------------------------------------
// Ids and deterministic builders
// ---------------------------------------------------------------------------------------------------------------------

const pad = (n: number): string => String(n).padStart(8, "0")

/** The `n`-th message id, `msg_0000000n`. */
export const messageId = (n: number | string): Ids.MessageId =>
  Ids.unsafe.message(typeof n === "number" ? `msg_${pad(n)}` : n)

/** The `n`-th part id, `prt_0000000n`. */
export const partId = (n: number | string): Ids.PartId => Ids.unsafe.part(typeof n === "number" ? `prt_${pad(n)}` : n)

/** The model every generated or built assistant message claims. */
export const MODEL = { providerId: "anthropic", modelId: "claude-sonnet-4" } as const

const millisOf = (id: number | string): number => (typeof id === "number" ? id * 1000 : 0)

// A part id derived from its message id, so builders need no counter: `prt_<message digits>_<index>`.
const derivedPartId = (message: number | string, index: number): Ids.PartId =>
  partId(`prt_${String(messageId(message)).slice(4)}_${String(index).padStart(2, "0")}`)

/** A user message with one text part (id derived from the message id). */
export const user = (
  id: number | string,
  text: string,
  extra: Partial<Omit<UserMessage, "role">> = {},
): UserMessage => ({
  role: "user",
  id: messageId(id),
  createdAt: millisOf(id),
  parts: [{ type: "text", id: derivedPartId(id, 0), text }],
  ...extra,
})

/** A compaction marker: a user message whose only part is `{type:"compaction", auto}`. */
export const marker = (
  id: number | string,
  compaction: Partial<Omit<Message.CompactionPart, "type" | "id">> = {},
  extra: Partial<Omit<UserMessage, "role">> = {},
): UserMessage => ({
  role: "user",
  id: messageId(id),
  createdAt: millisOf(id),
  parts: [{ type: "compaction", id: derivedPartId(id, 0), auto: false, ...compaction }],
  ...extra,
})

/** An assistant message answering `parentId`, with the given parts and zero usage. */
export const assistant = (
  id: number | string,
  parentId: number | string,
  parts: ReadonlyArray<AssistantPart>,
  extra: Partial<Omit<AssistantMessage, "role">> = {},
): AssistantMessage => ({
  role: "assistant",
  id: messageId(id),
  parentId: messageId(parentId),
  createdAt: millisOf(id),
  model: MODEL,
  tokens: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
  parts,
  ...extra,
})

/** A finished summary assistant (`summary: true`, `finish: "stop"`) answering the marker `parentId`. */
export const summary = (
  id: number | string,
  parentId: number | string,
  text: string,
  extra: Partial<Omit<AssistantMessage, "role">> = {},
): AssistantMessage =>
  assistant(id, parentId, [{ type: "text", id: derivedPartId(id, 0), text }], {
    summary: true,
    mode: "compaction",
    agent: "compaction",
    finish: "stop",
    ...extra,
  })

/** A text part. */
export const text = (id: number | string, value: string): Message.TextPart => ({
  type: "text",
  id: partId(id),
  text: value,
})

/** A completed tool part with the given output; `extra` is merged into its state (e.g. `{ compactedAt: 1 }`). */
export const tool = (
  id: number | string,
  name: string,
  output: string,
  extra: Partial<Omit<ToolCompleted, "status" | "output">> = {},
): ToolPart => ({
  type: "tool",
  id: partId(id),
  callId: `call_${typeof id === "number" ? pad(id) : id}`,
  tool: name,
  state: { status: "completed", input: {}, output, title: name, ...extra },
})

// ---------------------------------------------------------------------------------------------------------------------
// Arbitraries of single messages and parts (placeholder ids; `sessionArb` renumbers them)
// ---------------------------------------------------------------------------------------------------------------------

const PLACEHOLDER_MESSAGE = messageId(0)
const PLACEHOLDER_PART = partId(0)

/** Tool names the generator draws from; `skill` is the protected one. */
export const TOOL_NAMES: ReadonlyArray<string> = ["bash", "read", "edit", "grep", "glob", "webfetch", "skill"]

/** OpenCode's prune thresholds (spec §2.14), restated here so generators aim at them without asking the code. */
export const PROTECT = 40_000
export const MINIMUM = 20_000

/** Token counts at prune's boundaries: PRUNE_PROTECT and PRUNE_MINIMUM, each − 1, exact and + 1. */
export const boundaryTokensArb: fc.Arbitrary<number> = fc.constantFrom(
  PROTECT - 1,
  PROTECT,
  PROTECT + 1,
  MINIMUM - 1,
  MINIMUM,
  MINIMUM + 1,
)

/**
 * A tool output from tiny to ~60k chars. One repeated character keeps generation and shrinking cheap: only the
 * length matters to the estimate.
 */
export const outputArb: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom("x", "y", "z", "-"),
    fc.oneof(
      { weight: 3, arbitrary: fc.nat({ max: 400 }) },
      { weight: 2, arbitrary: fc.integer({ min: 1_000, max: 16_000 }) },
      { weight: 5, arbitrary: fc.integer({ min: 20_000, max: 60_000 }) },
      // Exactly at prune's thresholds (in tokens, ×4 chars), and lengths where the chars/4 estimate rounds.
      { weight: 2, arbitrary: boundaryTokensArb.map((tokens) => tokens * 4) },
      { weight: 1, arbitrary: fc.constantFrom(0, 1, 2, 3, 5, 6, 7) },
    ),
  )
  .map(([char, length]) => char.repeat(length))

// `true` in `hits` out of `outOf` cases.
const chance = (hits: number, outOf: number): fc.Arbitrary<boolean> =>
  fc.oneof({ weight: hits, arbitrary: fc.constant(true) }, { weight: outOf - hits, arbitrary: fc.constant(false) })

const shortText: fc.Arbitrary<string> = fc.string({ maxLength: 40 })

const inputArb: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  fc.record({ command: shortText }),
  fc.record({ filePath: shortText }),
  fc.constant({}),
)

const stateArb: fc.Arbitrary<Message.ToolState> = fc.oneof(
  { weight: 1, arbitrary: inputArb.map((input) => ({ status: "pending" as const, input })) },
  { weight: 1, arbitrary: inputArb.map((input) => ({ status: "running" as const, input, startedAt: 0 })) },
  {
    weight: 7,
    arbitrary: fc.record({ input: inputArb, output: outputArb, compacted: chance(1, 50) }).map(
      ({ input, output, compacted }): ToolCompleted => ({
        status: "completed",
        input,
        output,
        title: "done",
        startedAt: 0,
        endedAt: 0,
        ...(compacted ? { compactedAt: 0 } : {}),
      }),
    ),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({ input: inputArb, interrupted: fc.boolean(), partial: fc.option(outputArb, { nil: undefined }) })
      .map(({ input, interrupted, partial }) => ({
        status: "error" as const,
        input,
        error: interrupted ? "Tool execution aborted" : "command failed",
        ...(interrupted
          ? { metadata: partial === undefined ? { interrupted } : { interrupted, output: partial } }
          : {}),
      })),
  },
)

/** A tool part in any status, sometimes the protected `skill` tool, sometimes provider-executed. */
export const toolPartArb: fc.Arbitrary<ToolPart> = fc
  .record({
    tool: fc.oneof(
      { weight: 9, arbitrary: fc.constantFrom(...TOOL_NAMES) },
      { weight: 1, arbitrary: fc.constant("skill") },
    ),
    state: stateArb,
    providerExecuted: chance(1, 20),
  })
  .map(({ tool, state, providerExecuted }) => ({
    type: "tool",
    id: PLACEHOLDER_PART,
    callId: "call_0",
    tool,
    state,
    ...(providerExecuted ? { providerExecuted } : {}),
  }))

/** Normalised token usage of one call, sometimes with a provider `total`. */
export const tokenUsageArb: fc.Arbitrary<Tokens.TokenUsage> = fc
  .record({
    input: fc.nat({ max: 200_000 }),
    output: fc.nat({ max: 32_000 }),
    reasoning: fc.nat({ max: 8_000 }),
    cacheRead: fc.nat({ max: 150_000 }),
    cacheWrite: fc.nat({ max: 20_000 }),
    withTotal: fc.boolean(),
  })
  .map(({ withTotal, ...usage }) =>
    withTotal
      ? { ...usage, total: usage.input + usage.output + usage.reasoning + usage.cacheRead + usage.cacheWrite }
      : usage,
  )

const fileArb: fc.Arbitrary<Message.FilePart> = fc
  .record({
    kind: fc.constantFrom("png", "jpeg", "pdf", "text"),
    name: fc.stringMatching(/^[a-z]{1,8}$/),
    size: fc.nat({ max: 4_000 }),
  })
  .map(({ kind, name, size }) => {
    const mime =
      kind === "png" ? "image/png" : kind === "jpeg" ? "image/jpeg" : kind === "pdf" ? "application/pdf" : "text/plain"
    return {
      type: "file",
      id: PLACEHOLDER_PART,
      mime,
      filename: `${name}.${kind === "text" ? "txt" : kind}`,
      url: kind === "text" ? `file:///tmp/${name}.txt` : `data:${mime};base64,${"a".repeat(size)}`,
    }
  })

/** A user turn: typed text, sometimes attachments (images, PDFs, text files). */
export const userMessageArb: fc.Arbitrary<UserMessage> = fc
  .record({
    text: fc.string({ minLength: 1, maxLength: 200 }),
    files: fc.array(fileArb, { maxLength: 2 }),
    withFiles: chance(1, 5),
  })
  .map(({ text, files, withFiles }) => ({
    role: "user",
    id: PLACEHOLDER_MESSAGE,
    createdAt: 0,
    parts: [{ type: "text", id: PLACEHOLDER_PART, text }, ...(withFiles ? files : [])],
  }))

const errorArb: fc.Arbitrary<Message.MessageError> = fc.constantFrom(
  { name: "APIError", message: "Internal server error", data: { statusCode: 500, isRetryable: true } },
  { name: "AbortedError", message: "The operation was aborted" },
  { name: "ContextOverflowError", message: "prompt is too long" },
)

/** One model call's output: step parts, reasoning, text, tool calls; finished, unfinished or failed. */
export const assistantMessageArb: fc.Arbitrary<AssistantMessage> = fc
  .record({
    reasoning: fc.option(fc.string({ maxLength: 200 }), { nil: undefined }),
    text: fc.option(fc.string({ maxLength: 400 }), { nil: undefined }),
    tools: fc.array(toolPartArb, { maxLength: 5 }),
    tokens: tokenUsageArb,
    ending: fc.oneof(
      { weight: 8, arbitrary: fc.constantFrom("tool-calls", "end_turn", "stop").map((finish) => ({ finish })) },
      { weight: 1, arbitrary: fc.constant({}) },
      { weight: 1, arbitrary: errorArb.map((error) => ({ error })) },
    ),
  })
  .map(({ reasoning, text, tools, tokens, ending }) => {
    const parts: Array<AssistantPart> = [{ type: "step-start", id: PLACEHOLDER_PART }]
    if (reasoning !== undefined) parts.push({ type: "reasoning", id: PLACEHOLDER_PART, text: reasoning })
    if (text !== undefined) parts.push({ type: "text", id: PLACEHOLDER_PART, text })
    parts.push(...tools)
    const finish = "finish" in ending ? ending.finish : undefined
    if (finish !== undefined) parts.push({ type: "step-finish", id: PLACEHOLDER_PART, reason: finish, tokens })
    return {
      role: "assistant",
      id: PLACEHOLDER_MESSAGE,
      parentId: PLACEHOLDER_MESSAGE,
      createdAt: 0,
      model: MODEL,
      agent: "build",
      mode: "build",
      tokens,
      parts,
      ...ending,
    }
  })

// ---------------------------------------------------------------------------------------------------------------------
// Sessions
// ---------------------------------------------------------------------------------------------------------------------

/** A user message and the model calls that answered it. */
const turnArb = (maxSteps: number): fc.Arbitrary<Block> =>
  fc
    .tuple(userMessageArb, fc.array(assistantMessageArb, { maxLength: maxSteps }))
    .map(([first, steps]) => ({ kind: "turn", messages: [first, ...steps] }))

const summaryEndingArb: fc.Arbitrary<Partial<AssistantMessage>> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ finish: "stop" }) },
  {
    weight: 1,
    arbitrary: fc.constant({
      finish: "error",
      error: { name: "APIError", message: "Session too large to compact" },
    }),
  },
  { weight: 1, arbitrary: fc.constant({}) },
)

/** A compaction: a marker, its summary (usually finished), sometimes a synthetic continue message. */
const compactionArb: fc.Arbitrary<Block> = fc
  .record({
    auto: fc.boolean(),
    overflow: fc.option(fc.boolean(), { nil: undefined }),
    tailBack: fc.option(fc.nat({ max: 3 }), { nil: undefined }),
    text: fc.string({ minLength: 1, maxLength: 300 }),
    ending: summaryEndingArb,
    tokens: tokenUsageArb,
    continues: fc.boolean(),
  })
  .map(({ auto, overflow, tailBack, text, ending, tokens, continues }) => {
    const markerMessage: UserMessage = {
      role: "user",
      id: PLACEHOLDER_MESSAGE,
      createdAt: 0,
      parts: [{ type: "compaction", id: PLACEHOLDER_PART, auto, ...(overflow === undefined ? {} : { overflow }) }],
    }
    const summaryMessage: AssistantMessage = {
      role: "assistant",
      id: PLACEHOLDER_MESSAGE,
      parentId: PLACEHOLDER_MESSAGE,
      createdAt: 0,
      model: MODEL,
      agent: "compaction",
      mode: "compaction",
      summary: true,
      tokens,
      parts: [{ type: "text", id: PLACEHOLDER_PART, text }],
      ...ending,
    }
    const continueMessage: UserMessage = {
      role: "user",
      id: PLACEHOLDER_MESSAGE,
      createdAt: 0,
      parts: [
        {
          type: "text",
          id: PLACEHOLDER_PART,
          text: "Continue if you have next steps, or stop and ask for clarification if you are unsure how to proceed.",
          synthetic: true,
          metadata: { compaction_continue: true },
        },
      ],
    }
    const messages: Array<Msg> = [markerMessage, summaryMessage]
    if (continues && auto && "finish" in ending) messages.push(continueMessage)
    return tailBack === undefined ? { kind: "compaction", messages } : { kind: "compaction", messages, tailBack }
  })

interface Block {
  readonly kind: "turn" | "compaction"
  readonly messages: ReadonlyArray<Msg>
  /** For a compaction: keep the tail from this many non-marker user messages back (0 = the latest). */
  readonly tailBack?: number
}

/** Options of `sessionArb`. */
export interface SessionOptions {
  /** Fewest blocks (turns or compactions); default 0, so empty sessions are generated too. */
  readonly minTurns?: number
  /** Most blocks; default 16. */
  readonly maxTurns?: number
  /** Most assistant messages answering one user message; default 4. */
  readonly maxSteps?: number
  /** Whether compactions (marker + summary) appear; default true. */
  readonly compactions?: boolean
}

/**
 * Gives a generated message list fresh ids, ascending timestamps and consistent links: each assistant's `parentId` is
 * the user message before it, tool timestamps sit inside their message, `callId`s are unique.
 */
export const renumber = (messages: ReadonlyArray<Msg>): ReadonlyArray<Msg> => {
  let nextPart = 1
  let lastUser = PLACEHOLDER_MESSAGE
  const freshPart = () => partId(nextPart++)
  return messages.map((message, index): Msg => {
    const id = messageId(index + 1)
    const createdAt = (index + 1) * 1000
    if (message.role === "user") {
      lastUser = id
      return { ...message, id, createdAt, parts: message.parts.map((part): UserPart => ({ ...part, id: freshPart() })) }
    }
    const parts = message.parts.map((part): AssistantPart => {
      const pid = freshPart()
      if (part.type !== "tool") return { ...part, id: pid }
      const state = part.state
      const timed =
        state.status === "completed"
          ? {
              ...state,
              startedAt: createdAt + 100,
              endedAt: createdAt + 200,
              ...(state.compactedAt === undefined ? {} : { compactedAt: createdAt + 300 }),
            }
          : state.status === "running"
            ? { ...state, startedAt: createdAt + 100 }
            : state
      return { ...part, id: pid, callId: `call_${pad(nextPart - 1)}`, state: timed }
    })
    const finished = message.finish !== undefined || message.error !== undefined
    return {
      ...message,
      id,
      parentId: lastUser,
      createdAt,
      parts,
      ...(finished ? { completedAt: createdAt + 900 } : {}),
    }
  })
}

// Points each marker that asked for a tail at the chosen earlier non-marker user message, if there is one.
const linkTails = (messages: ReadonlyArray<Msg>, tails: ReadonlyMap<number, number>): ReadonlyArray<Msg> =>
  messages.map((message, index) => {
    const back = tails.get(index)
    if (back === undefined || message.role !== "user") return message
    const earlier = messages
      .slice(0, index)
      .filter((m) => m.role === "user" && Message.compactionPartOf(m) === undefined)
    const target = earlier[earlier.length - 1 - back]
    if (target === undefined) return message
    return {
      ...message,
      parts: message.parts.map((part) => (part.type === "compaction" ? { ...part, tailStartId: target.id } : part)),
    }
  })

/**
 * A realistic chronological session: user turns answered by assistant steps with tool calls in every status (outputs
 * up to ~60k chars, so prune really triggers), sometimes `skill` calls, already-compacted outputs and compactions
 * (marker, summary — usually finished, sometimes failed or unfinished — and a synthetic continue message).
 */
export const sessionArb = (options: SessionOptions = {}): fc.Arbitrary<ReadonlyArray<Msg>> => {
  const turn = turnArb(options.maxSteps ?? 4)
  const block =
    options.compactions === false
      ? turn
      : fc.oneof({ weight: 10, arbitrary: turn }, { weight: 1, arbitrary: compactionArb })
  return fc.array(block, { minLength: options.minTurns ?? 0, maxLength: options.maxTurns ?? 16 }).map((blocks) => {
    const flat: Array<Msg> = []
    const tails = new Map<number, number>()
    for (const b of blocks) {
      if (b.tailBack !== undefined) tails.set(flat.length, b.tailBack)
      flat.push(...b.messages)
    }
    return linkTails(renumber(flat), tails)
  })
}

/**
 * A session built to land prune's running totals exactly on its thresholds: two turns of old outputs whose newest
 * outputs sum to PRUNE_PROTECT − 1, exactly or + 1, and whose older outputs sum to PRUNE_MINIMUM − 1, exactly or + 1,
 * split over one to three parts each; then the two guarded turns. Sometimes the outputs come from `skill`.
 */
export const pruneBoundarySessionArb: fc.Arbitrary<ReadonlyArray<Msg>> = fc
  .record({
    protectDelta: fc.constantFrom(-1, 0, 1),
    minimumDelta: fc.constantFrom(-1, 0, 1),
    newerSplit: fc.array(fc.nat({ max: 39_000 }), { maxLength: 2 }),
    olderSplit: fc.array(fc.nat({ max: 19_000 }), { maxLength: 2 }),
    tool: fc.oneof(
      { weight: 9, arbitrary: fc.constantFrom("bash", "read") },
      { weight: 1, arbitrary: fc.constant("skill") },
    ),
    alreadyCompacted: chance(1, 8),
  })
  .map(({ protectDelta, minimumDelta, newerSplit, olderSplit, tool, alreadyCompacted }) => {
    // Sizes (in tokens) that sum to `total`, cut at the given points.
    const split = (total: number, cuts: ReadonlyArray<number>): ReadonlyArray<number> => {
      const points = [...new Set(cuts.filter((c) => c > 0 && c < total))].sort((a, b) => a - b)
      return [...points, total].map((point, i) => point - (i === 0 ? 0 : points[i - 1]!))
    }
    const toolOf = (tokens: number, compacted = false): ToolPart => ({
      type: "tool",
      id: PLACEHOLDER_PART,
      callId: "call_0",
      tool,
      state: {
        status: "completed",
        input: {},
        output: "x".repeat(tokens * 4),
        title: tool,
        ...(compacted ? { compactedAt: 0 } : {}),
      },
    })
    const step = (parts: ReadonlyArray<AssistantPart>): AssistantMessage => ({
      role: "assistant",
      id: PLACEHOLDER_MESSAGE,
      parentId: PLACEHOLDER_MESSAGE,
      createdAt: 0,
      model: MODEL,
      tokens: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
      finish: "tool-calls",
      parts,
    })
    const ask = (text: string): UserMessage => ({
      role: "user",
      id: PLACEHOLDER_MESSAGE,
      createdAt: 0,
      parts: [{ type: "text", id: PLACEHOLDER_PART, text }],
    })
    const older = split(MINIMUM + minimumDelta, olderSplit).map((tokens) => toolOf(tokens))
    const newer = split(PROTECT + protectDelta, newerSplit).map((tokens) => toolOf(tokens))
    const history: Array<Msg> = [ask("first")]
    if (alreadyCompacted) history.push(step([toolOf(30_000, true)]))
    history.push(step(older), ask("second"), step(newer), ask("third"), step([]), ask("fourth"), step([]))
    return renumber(history)
  })

// Small values too: tiny windows are where a ratio can round the trigger down to 0.
const countArb = (max: number): fc.Arbitrary<number> =>
  fc.oneof(
    { weight: 1, arbitrary: fc.constant(0) },
    { weight: 3, arbitrary: fc.nat({ max: 1_000 }) },
    {
      weight: 4,
      arbitrary: fc.nat({ max }),
    },
  )

/**
 * Model limits from 0-token models (context 0, output 0) through tiny windows to 2M contexts, with and without a
 * separate input limit.
 */
export const limitsArb: fc.Arbitrary<Model.ModelLimits> = fc
  .record({
    context: countArb(2_000_000),
    input: fc.option(countArb(2_000_000), { nil: undefined }),
    output: countArb(200_000),
  })
  .map(({ context, input, output }) => (input === undefined ? { context, output } : { context, input, output }))

/** Compaction config in every shape: each key absent or set, including 0 tails and budgets and an output cap. */
export const compactionConfigArb: fc.Arbitrary<Config.CompactionConfig> = fc.record(
  {
    auto: fc.boolean(),
    prune: fc.boolean(),
    reserved: countArb(100_000),
    tail_turns: fc.nat({ max: 4 }),
    preserve_recent_tokens: countArb(20_000),
    output_token_max: fc.integer({ min: 1, max: 64_000 }),
    threshold: fc.oneof(fc.constant(1), fc.double({ min: 0.01, max: 1, noNaN: true })),
  },
  { requiredKeys: [] },
)

/** Prune options: OpenCode's defaults (absent) or overrides, small ones included, and any set of protected tools. */
export const pruneOptionsArb: fc.Arbitrary<{
  readonly protect?: number
  readonly minimum?: number
  readonly protectedTools?: ReadonlyArray<string>
}> = fc.record(
  {
    protect: fc.oneof(fc.constant(0), fc.nat({ max: 100 }), fc.nat({ max: 80_000 })),
    minimum: fc.oneof(fc.constant(0), fc.nat({ max: 100 }), fc.nat({ max: 40_000 })),
    protectedTools: fc.subarray([...TOOL_NAMES]),
  },
  { requiredKeys: [] },
)

/**
 * Usage whose context count is exactly `count`, spread over input, output and cache (reasoning, which never counts,
 * added on top), sometimes as a provider `total`.
 */
export const usageOfCountArb = (count: number): fc.Arbitrary<Tokens.TokenUsage> =>
  fc
    .record({
      cuts: fc.tuple(fc.nat({ max: count }), fc.nat({ max: count }), fc.nat({ max: count })),
      reasoning: fc.nat({ max: 10_000 }),
      asTotal: chance(1, 4),
    })
    .map(({ cuts, reasoning, asTotal }) => {
      // A total of 0 means "not reported" (the sum counts), so a zero count is spelled as the sum.
      if (asTotal && count > 0) return { input: 1, output: 0, reasoning, cacheRead: 0, cacheWrite: 0, total: count }
      const [a, b, c] = [...cuts].sort((x, y) => x - y) as [number, number, number]
      return { input: a, output: b - a, reasoning, cacheRead: c - b, cacheWrite: count - c }
    })
