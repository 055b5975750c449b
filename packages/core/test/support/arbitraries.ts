/**
 * Shared test data: deterministic message builders and fast-check arbitraries of realistic chronological sessions.
 *
 * Arbitraries build messages with placeholder ids; `sessionArb` renumbers them, so a generated session has unique
 * ascending ids (`msg_00000001`…, `prt_00000001`…), ascending timestamps, and each assistant's `parentId` pointing at
 * the user message before it (a summary's at its marker).
 */
import { Ids, Message, type Tokens } from "@pivot/core"
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
  /** Fewest blocks (turns or compactions); default 2. */
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
  return fc.array(block, { minLength: options.minTurns ?? 2, maxLength: options.maxTurns ?? 16 }).map((blocks) => {
    const flat: Array<Msg> = []
    const tails = new Map<number, number>()
    for (const b of blocks) {
      if (b.tailBack !== undefined) tails.set(flat.length, b.tailBack)
      flat.push(...b.messages)
    }
    return linkTails(renumber(flat), tails)
  })
}
