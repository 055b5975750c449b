/** One realistic example of every event type, for golden fixtures and the event catalog. */
import { type Events, Ids } from "@pivot/core"

const msg = Ids.unsafe.message
const prt = Ids.unsafe.part
const ses = Ids.unsafe.session
const model = { providerId: "anthropic", modelId: "claude-sonnet-4-5" }
const usage = { input: 41_200, output: 830, reasoning: 120, cacheRead: 38_000, cacheWrite: 1_100 }

const summary = {
  role: "assistant" as const,
  id: msg("msg_0000000a0008"),
  parentId: msg("msg_0000000a0007"),
  createdAt: 1_767_000_009_000,
  completedAt: 1_767_000_012_000,
  model,
  agent: "compaction",
  mode: "compaction",
  summary: true,
  tokens: { input: 30_500, output: 900, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
  finish: "stop",
  parts: [{ type: "text" as const, id: prt("prt_0000000a0008"), text: "## Objective\n- Fix the failing parser test" }],
}

/** One event of each type, in catalog order. */
export const sampleEvents: ReadonlyArray<Events.Event> = [
  {
    _tag: "SessionStarted",
    sessionId: Ids.unsafe.session("ses_0000000a0000"),
    at: 1_767_000_000_000,
    title: "Fix parser",
    model,
  },
  {
    _tag: "UserMessageAdded",
    at: 1_767_000_001_000,
    message: {
      role: "user",
      id: msg("msg_0000000a0001"),
      createdAt: 1_767_000_001_000,
      agent: "build",
      model,
      parts: [
        { type: "text", id: prt("prt_0000000a0001"), text: "The parser test fails, please fix it." },
        {
          type: "file",
          id: prt("prt_0000000a0002"),
          mime: "image/png",
          filename: "failure.png",
          url: "data:image/png;base64,iVBORw0KGgo=",
        },
      ],
    },
  },
  {
    _tag: "AssistantStepRecorded",
    at: 1_767_000_002_000,
    message: {
      role: "assistant",
      id: msg("msg_0000000a0002"),
      parentId: msg("msg_0000000a0001"),
      createdAt: 1_767_000_001_500,
      completedAt: 1_767_000_002_000,
      model,
      agent: "build",
      mode: "build",
      tokens: usage,
      finish: "tool-calls",
      parts: [
        { type: "step-start", id: prt("prt_0000000a0003") },
        { type: "reasoning", id: prt("prt_0000000a0004"), text: "Run the test first." },
        {
          type: "tool",
          id: prt("prt_0000000a0005"),
          callId: "toolu_01",
          tool: "bash",
          state: { status: "pending", input: { command: "npm test -- parser" } },
        },
        { type: "step-finish", id: prt("prt_0000000a0006"), reason: "tool-calls", tokens: usage },
      ],
    },
  },
  {
    _tag: "ToolResultRecorded",
    at: 1_767_000_003_000,
    messageId: msg("msg_0000000a0002"),
    partId: prt("prt_0000000a0005"),
    state: {
      status: "completed",
      input: { command: "npm test -- parser" },
      output: "FAIL src/parser.test.ts\n  expected 3 tokens, got 2",
      title: "npm test -- parser",
      metadata: { exit: 1 },
      startedAt: 1_767_000_002_100,
      endedAt: 1_767_000_003_000,
    },
  },
  {
    _tag: "ProviderErrorReported",
    at: 1_767_000_004_000,
    message: {
      role: "assistant",
      id: msg("msg_0000000a0003"),
      parentId: msg("msg_0000000a0001"),
      createdAt: 1_767_000_003_500,
      model,
      tokens: { input: 0, output: 0, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
      parts: [],
    },
    error: { name: "ContextOverflowError", message: "prompt is too long: 201234 tokens > 200000 maximum" },
    overflow: true,
  },
  {
    _tag: "OverflowDetected",
    at: 1_767_000_004_000,
    messageId: msg("msg_0000000a0002"),
    source: "usage",
    tokens: 81_130,
    trigger: 68_000,
  },
  {
    _tag: "CompactionRequested",
    at: 1_767_000_005_000,
    marker: {
      role: "user",
      id: msg("msg_0000000a0007"),
      createdAt: 1_767_000_005_000,
      agent: "build",
      model,
      parts: [{ type: "compaction", id: prt("prt_0000000a0007"), auto: true, overflow: false }],
    },
  },
  {
    _tag: "CompactionStarted",
    at: 1_767_000_009_000,
    markerId: msg("msg_0000000a0007"),
    summaryId: msg("msg_0000000a0008"),
    model,
    plan: {
      head: [msg("msg_0000000a0001"), msg("msg_0000000a0002")],
      tail: [msg("msg_0000000a0004"), msg("msg_0000000a0005")],
      tailStartId: msg("msg_0000000a0004"),
      previousSummary: "## Objective\n- Fix the parser",
    },
    prompt: "Update the summary in <previous-summary> …",
    pluginContext: ["Project uses pnpm."],
  },
  { _tag: "SummaryFinished", at: 1_767_000_012_000, markerId: msg("msg_0000000a0007"), summary },
  {
    _tag: "SummaryFailed",
    at: 1_767_000_012_000,
    markerId: msg("msg_0000000a0007"),
    summary: {
      ...summary,
      finish: "error",
      parts: [],
      error: { name: "APIError", message: "503 Service Unavailable", data: { statusCode: 503 } },
    },
  },
  {
    _tag: "TurnReplayed",
    at: 1_767_000_013_000,
    markerId: msg("msg_0000000a0007"),
    replayOf: msg("msg_0000000a0001"),
    message: {
      role: "user",
      id: msg("msg_0000000a0009"),
      createdAt: 1_767_000_013_000,
      agent: "build",
      model,
      parts: [
        { type: "text", id: prt("prt_0000000a0009_000"), text: "The parser test fails, please fix it." },
        { type: "text", id: prt("prt_0000000a0009_001"), text: "[Attached image/png: failure.png]" },
      ],
    },
  },
  {
    _tag: "ContinueRequested",
    at: 1_767_000_013_000,
    markerId: msg("msg_0000000a0007"),
    message: {
      role: "user",
      id: msg("msg_0000000a0009"),
      createdAt: 1_767_000_013_000,
      parts: [
        {
          type: "text",
          id: prt("prt_0000000a0009_000"),
          text: "Continue if you have next steps, or stop and ask for clarification if you are unsure how to proceed.",
          synthetic: true,
          metadata: { compaction_continue: true },
        },
      ],
    },
  },
  {
    _tag: "PartCompacted",
    at: 1_767_000_014_000,
    messageId: msg("msg_0000000a0002"),
    partId: prt("prt_0000000a0005"),
    tokens: 12_500,
  },
  {
    _tag: "CompactionAbandoned",
    at: 1_767_000_015_000,
    messageId: msg("msg_0000000a0010"),
    attempts: 2,
    limit: 2,
    tokens: 71_200,
    trigger: 68_000,
  },
  {
    _tag: "SummaryInputBudgeted",
    at: 1_767_000_009_000,
    markerId: msg("msg_0000000a0007"),
    budget: 150_000,
    estimated: 212_400,
    dropped: [msg("msg_0000000a0001"), msg("msg_0000000a0002")],
    kept: 14,
    digest: true,
  },
  {
    _tag: "SummaryFallbackUsed",
    at: 1_767_000_012_000,
    markerId: msg("msg_0000000a0007"),
    reason: "timeout",
    error: { name: "SummarizerTimeout", message: "the summariser did not answer within 120 s" },
  },
  {
    _tag: "SecretsRedacted",
    at: 1_767_000_009_000,
    markerId: msg("msg_0000000a0007"),
    stage: "summarizer-input",
    findings: [
      {
        messageId: msg("msg_0000000a0002"),
        partId: prt("prt_0000000a0005"),
        field: "state.output",
        kind: "env-secret",
      },
    ],
  },
  {
    _tag: "PluginFailed",
    at: 1_767_000_009_000,
    plugin: "project-notes",
    hook: "compactionContext",
    reason: "timeout",
    message: "no answer within 2000 ms",
    markerId: msg("msg_0000000a0007"),
  },
  {
    _tag: "PluginContributed",
    at: 1_767_000_009_000,
    plugin: "project-notes",
    hook: "compactionContext",
    markerId: msg("msg_0000000a0007"),
    context: ["Project uses pnpm."],
  },
  {
    _tag: "AutoContinueSkipped",
    at: 1_767_000_013_000,
    markerId: msg("msg_0000000a0007"),
    reason: "waiting-for-user",
  },
  {
    _tag: "SecretsRedactedOnRecord",
    at: 1_767_000_010_000,
    command: "RecordToolResult",
    findings: [
      {
        messageId: msg("msg_0000000a0002"),
        partId: prt("prt_0000000a0005"),
        field: "state.output",
        kind: "env-secret",
      },
    ],
  },
  {
    _tag: "CompactionRequestedByModel",
    at: 1_767_000_011_000,
    markerId: msg("msg_0000000b0001"),
    focus: "keep the failing test names",
  },
  {
    _tag: "HudShown",
    at: 1_767_000_011_500,
    text: "[pivot context status]\ncontext: 12,000 / 68,000 tokens (17%), level ok\npivots so far: 1; pruned: none",
  },
  {
    _tag: "ContextRecalled",
    at: 1_767_000_014_000,
    id: "prt_0000000a0005",
    found: ["prt_0000000a0005"],
    chars: 1_840,
    truncated: false,
  },
  {
    _tag: "SessionForked",
    at: 1_767_000_015_000,
    parent: ses("ses_0000000000parent"),
    parentVersion: 12,
  },
  {
    _tag: "ArtifactsChecked",
    at: 1_767_000_016_000,
    markerId: msg("msg_0000000a0010"),
    artifacts: [
      { kind: "file-read", text: "src/parser.ts", named: true },
      { kind: "file-edited", text: "src/parser.ts", named: true },
      { kind: "command", text: "npm test -- parser", named: true },
      { kind: "error", text: "bash: Expected ';' at 3:14", named: false },
      { kind: "request", text: "The parser test fails, please fix it.", named: true },
    ],
  },
  { _tag: "SessionForgotten", at: 1_767_000_016_000 },
  {
    _tag: "ProbesAnswered",
    at: 1_767_000_017_000,
    markerId: msg("msg_0000000a0010"),
    model: { providerId: "anthropic", modelId: "claude-haiku-4-5" },
    usage: { input: 420, output: 36, reasoning: 0, cacheRead: 0, cacheWrite: 0 },
    probes: [
      {
        kind: "request",
        question: "What did the user ask for? List each request.",
        answer: "Fix the failing parser test.",
        expected: [{ text: "The parser test fails, please fix it.", found: true }],
      },
      {
        kind: "file-edited",
        question:
          "Which files did you edit (change or create), for instance to fix \"bash: Expected ';' at 3:14\"? List every path.",
        answer: "src/parser.ts",
        expected: [{ text: "src/parser.ts", found: true }],
      },
      {
        kind: "error",
        question: "Which errors did you hit? Quote each error message.",
        answer: "unknown",
        expected: [{ text: "bash: Expected ';' at 3:14", found: false }],
      },
    ],
  },
  {
    _tag: "SessionTitled",
    at: 1_767_000_030_000,
    title: "Fix the failing parser test",
  },
  {
    _tag: "ContextPinned",
    at: 1_767_000_019_000,
    messageId: msg("msg_0000000a0001"),
    by: "default",
    tokens: 42,
    budget: 16_800,
  },
  {
    _tag: "ContextUnpinned",
    at: 1_767_000_020_000,
    messageId: msg("msg_0000000a0001"),
    partId: prt("prt_0000000a0001"),
    reason: "budget",
    for: "prt_0000000a0005",
  },
  {
    _tag: "CompactionRequestedByStrategy",
    at: 1_767_000_004_900,
    markerId: msg("msg_0000000a0007"),
    reason: "threshold",
    strategy: "cache-aware+errored-inputs",
    tokens: 150_400,
    trigger: 147_300,
    request: 151_900,
    usable: 196_000,
  },
]

/**
 * Events of the same version with optional fields set, by variant name: each is also a golden fixture
 * (`<Type>.v<N>.<variant>.json`).
 */
export const sampleVariants: ReadonlyArray<{ readonly variant: string; readonly event: Events.Event }> = [
  {
    variant: "rule",
    event: {
      _tag: "PartCompacted",
      at: 1_767_000_014_500,
      messageId: msg("msg_0000000a0002"),
      partId: prt("prt_0000000a0004"),
      tokens: 3_200,
      rule: "duplicate-calls",
      reason: "same read call as prt_0000000a0005, whose output is newer",
    },
  },
  {
    // A tool call's input cleared (ADR 0030).
    variant: "input",
    event: {
      _tag: "PartCompacted",
      at: 1_767_000_014_700,
      messageId: msg("msg_0000000a0002"),
      partId: prt("prt_0000000a0006"),
      tokens: 2_400,
      rule: "superseded-writes",
      reason: "write of src/app.ts superseded by the later read prt_0000000a0009",
      target: "input",
    },
  },
]
