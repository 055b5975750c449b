/**
 * An OpenCode export → pivot's events, as one pure function: all or nothing, no IO, no clock.
 *
 * Messages are replayed in id order (OpenCode ids sort chronologically). Each becomes the event pivot would have
 * recorded live: a user message, an assistant step, a compaction marker, the compaction's start and outcome, the
 * continue or replayed turn after it, and the prunes of tool outputs at the time they happened. What OpenCode never
 * recorded (the summariser prompt) or pivot does not model (patch, snapshot, agent, retry parts) is reported.
 */
import {
  Conversation,
  type Events,
  type Ids,
  Message,
  type Model,
  Tokens as PivotTokens,
  Session,
  ValidWindow,
  Window,
} from "@pivot/core"
import * as Result from "effect/Result"
import * as Export from "./Export.ts"
import { ImportError } from "./ImportError.ts"
import * as Plan from "./Plan.ts"

/** What the import did besides the events. */
export interface ImportReport {
  /** Messages imported (every message of the export). */
  readonly messages: number
  /** Parts imported. */
  readonly parts: number
  /** Messages in the imported session's window (what the model sees next), from the planner's own fold. */
  readonly window: number
  /** Parts left out, by part type (types pivot does not model, or parts on a role that cannot hold them). */
  readonly dropped: Readonly<Record<string, number>>
  /** What did not carry over exactly, one sentence each (including each entry of `repaired`). */
  readonly warnings: ReadonlyArray<string>
  /**
   * What the imported window breaks of the model-input invariant (`ValidWindow`: a corrupt or truncated history),
   * each naming the message and why. Not a failure: `Window.render` repairs it deterministically before sending.
   */
  readonly repaired: ReadonlyArray<ValidWindow.Violation>
}

/** The imported session. */
export interface ImportResult {
  readonly sessionId: Ids.SessionId
  /** The session's events, in stream order, starting with `SessionStarted`. */
  readonly events: ReadonlyArray<Events.Event>
  readonly report: ImportReport
}

const opt = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: V }

const isRecord = (u: unknown): u is Readonly<Record<string, unknown>> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** OpenCode's stored usage in pivot's shape (both are already normalised, spec §2.1). */
export const tokenUsage = (tokens: Export.Tokens): PivotTokens.TokenUsage => ({
  input: tokens.input,
  output: tokens.output,
  reasoning: tokens.reasoning,
  cacheRead: tokens.cache.read,
  cacheWrite: tokens.cache.write,
  ...opt("total", tokens.total),
})

/** A `NamedError` as pivot's `MessageError`: the message comes from `data.message`, `data` is kept as stored. */
export const messageError = (error: Export.NamedError): Message.MessageError => {
  const text = isRecord(error.data) && typeof error.data.message === "string" ? error.data.message : error.name
  return { name: error.name, message: text, ...opt("data", error.data) }
}

const filePart = (part: Export.FilePart): Message.FilePart => ({
  type: "file",
  id: part.id,
  mime: part.mime,
  ...opt("filename", part.filename),
  url: part.url,
})

const textPart = (part: Export.TextPart): Message.TextPart => ({
  type: "text",
  id: part.id,
  text: part.text,
  ...opt("synthetic", part.synthetic),
  ...opt("ignored", part.ignored),
  ...opt("metadata", part.metadata),
})

/** A tool state as pivot stores it. A pruned output is kept: the prune is a separate `PartCompacted` event. */
export const toolState = (state: Export.ToolState): Message.ToolState => {
  switch (state.status) {
    case "pending":
      return { status: "pending", input: state.input }
    case "running":
      return {
        status: "running",
        input: state.input,
        ...opt("title", state.title),
        ...opt("startedAt", state.time?.start),
      }
    case "completed":
      return {
        status: "completed",
        input: state.input,
        output: state.output,
        ...opt("title", state.title),
        ...opt("metadata", state.metadata),
        ...opt("attachments", state.attachments?.map(filePart)),
        ...opt("startedAt", state.time?.start),
        ...opt("endedAt", state.time?.end),
      }
    case "error":
      return {
        status: "error",
        input: state.input,
        error: state.error,
        ...opt("metadata", state.metadata),
        ...opt("startedAt", state.time?.start),
        ...opt("endedAt", state.time?.end),
      }
  }
}

const userPart = (part: Export.ModeledPart): Message.UserPart | undefined => {
  switch (part.type) {
    case "text":
      return textPart(part)
    case "file":
      return filePart(part)
    case "compaction":
      return {
        type: "compaction",
        id: part.id,
        auto: part.auto,
        ...opt("overflow", part.overflow),
        ...opt("tailStartId", part.tail_start_id),
      }
    case "subtask":
      return { type: "subtask", id: part.id, prompt: part.prompt, description: part.description, agent: part.agent }
    default:
      return undefined
  }
}

const assistantPart = (part: Export.ModeledPart): Message.AssistantPart | undefined => {
  switch (part.type) {
    case "text":
      return textPart(part)
    case "file":
      return filePart(part)
    case "reasoning":
      return { type: "reasoning", id: part.id, text: part.text }
    case "step-start":
      return { type: "step-start", id: part.id }
    case "step-finish":
      return {
        type: "step-finish",
        id: part.id,
        reason: part.reason,
        ...opt("tokens", part.tokens === undefined ? undefined : tokenUsage(part.tokens)),
      }
    case "tool":
      return {
        type: "tool",
        id: part.id,
        callId: part.callID,
        tool: part.tool,
        state: toolState(part.state),
        ...opt("providerExecuted", part.metadata?.providerExecuted === true ? true : undefined),
      }
    default:
      return undefined
  }
}

const userModel = (model: Export.UserInfo["model"]): Model.ModelRef | undefined =>
  model === undefined
    ? undefined
    : { providerId: model.providerID, modelId: model.modelID, ...opt("variant", model.variant) }

const assistantModel = (info: Export.AssistantInfo): Model.ModelRef => ({
  providerId: info.providerID,
  modelId: info.modelID,
  ...opt("variant", info.variant),
})

/** The session's own model field, which OpenCode versions spell differently (`{ providerID, modelID | id }`). */
const sessionModel = (model: unknown): Model.ModelRef | undefined => {
  if (!isRecord(model) || typeof model.providerID !== "string") return undefined
  const id = typeof model.modelID === "string" ? model.modelID : model.id
  return typeof id === "string" ? { providerId: model.providerID, modelId: id } : undefined
}

/** Whether a user message is the synthetic "continue" OpenCode adds after an auto compaction (spec §2.8 step 13). */
const isContinue = (message: Message.UserMessage): boolean =>
  message.parts.some((p) => p.type === "text" && p.synthetic === true && p.metadata?.compaction_continue === true)

/** The parts of a replayed turn without ids: media files become placeholders (spec §2.8 step 13). */
const replayShape = (parts: ReadonlyArray<Message.UserPart>, replayed: boolean): string =>
  JSON.stringify(
    parts.flatMap((part): ReadonlyArray<unknown> => {
      if (part.type === "compaction") return []
      if (part.type === "text") return [{ type: "text", text: part.text }]
      if (part.type === "file" && replayed && Message.isMedia(part.mime))
        return [{ type: "text", text: Message.attachedPlaceholder(part) }]
      const { id: _, ...rest } = part
      return [rest]
    }),
  )

/** An overflow compaction whose replayed turn may come next. */
interface Watch {
  readonly markerId: Ids.MessageId
  readonly original: Message.UserMessage
}

interface Entry {
  readonly index: number
  readonly message: Export.MessageWithParts
}

/** Messages in id order, each with its index in the export (for error paths); fails on a reused id. */
const ordered = (messages: ReadonlyArray<Export.MessageWithParts>): Result.Result<Array<Entry>, ImportError> => {
  const seen = new Map<string, number>()
  for (const [index, message] of messages.entries()) {
    const first = seen.get(message.info.id)
    if (first !== undefined)
      return Result.fail(
        new ImportError({
          path: `messages[${index}].info.id`,
          reason: `message id ${message.info.id} is already used by messages[${first}]`,
        }),
      )
    seen.set(message.info.id, index)
    const parts = new Map<string, number>()
    for (const [p, part] of message.parts.entries()) {
      if (part.id === undefined) continue
      const other = parts.get(part.id)
      if (other !== undefined)
        return Result.fail(
          new ImportError({
            path: `messages[${index}].parts[${p}].id`,
            reason: `part id ${part.id} is already used by messages[${index}].parts[${other}]`,
          }),
        )
      parts.set(part.id, p)
    }
  }
  // A stable sort: equal ids cannot happen, so the order is fully determined by the ids.
  return Result.succeed(
    messages
      .map((message, index) => ({ index, message }))
      .sort((a, b) => (a.message.info.id < b.message.info.id ? -1 : 1)),
  )
}

/** Markers some summary will start a compaction for (a summary that finished or failed, not one interrupted). */
const startedMarkers = (messages: ReadonlyArray<Export.MessageWithParts>): Set<string> => {
  const markers = new Set(
    messages
      .filter((m) => m.info.role === "user" && m.parts.some((p) => p.type === "compaction"))
      .map((m) => m.info.id),
  )
  const started = new Set<string>()
  for (const { info } of messages)
    if (
      info.role === "assistant" &&
      info.summary === true &&
      markers.has(info.parentID) &&
      (info.finish !== undefined || info.error !== undefined)
    )
      started.add(info.parentID)
  return started
}

/** Turns a decoded export into events. Fails only on what the schema cannot see (reused ids). */
export const fromExport = (exported: Export.Export): Result.Result<ImportResult, ImportError> => {
  const sorted = ordered(exported.messages)
  if (Result.isFailure(sorted)) return Result.fail(sorted.failure)
  const sessionId = exported.info.id
  const ids = new Set(exported.messages.map((m) => m.info.id))
  const started = startedMarkers(exported.messages)
  // The exported tail starts, by marker: a started marker is recorded without one, the plan is rebuilt from it.
  const tailStarts = new Map<string, Ids.MessageId>()
  for (const { info, parts } of exported.messages)
    for (const part of parts)
      if (Export.isModeled(part) && part.type === "compaction" && part.tail_start_id !== undefined)
        tailStarts.set(info.id, part.tail_start_id)

  const events: Array<Events.Event> = []
  let state = Session.initialState
  const push = (event: Events.Event) => {
    events.push(event)
    state = Session.evolve(state, event)
  }
  const warnings: Array<string> = []
  const dropped: Record<string, number> = {}
  let partCount = 0
  // Maps a message's parts; the rest are dropped and counted (a modelled type on the wrong role is warned about).
  const mapParts = <P>(
    parts: ReadonlyArray<Export.Part>,
    map: (part: Export.ModeledPart) => P | undefined,
    holder: string,
  ): Array<P> => {
    const mapped: Array<P> = []
    for (const part of parts) {
      const kept = Export.isModeled(part) ? map(part) : undefined
      if (kept !== undefined) mapped.push(kept)
      else {
        dropped[part.type] = (dropped[part.type] ?? 0) + 1
        if (Export.isModeled(part)) warnings.push(`${holder} cannot hold a ${part.type} part; it was dropped`)
      }
    }
    partCount += mapped.length
    return mapped
  }

  // Prunes wait until the first message created after them, so the log replays them when they happened.
  let prunes: Array<Events.Event & { readonly _tag: "PartCompacted" }> = []
  const flushPrunes = (until: number) => {
    const due = prunes.filter((p) => p.at <= until)
    if (due.length === 0) return
    prunes = prunes.filter((p) => p.at > until)
    due.sort((a, b) => a.at - b.at || (a.partId < b.partId ? -1 : a.partId > b.partId ? 1 : 0))
    for (const prune of due) push(prune)
  }

  const firstModel = (() => {
    for (const { message } of sorted.success) {
      const model = message.info.role === "user" ? userModel(message.info.model) : assistantModel(message.info)
      if (model !== undefined) return model
    }
    return sessionModel(exported.info.model)
  })()
  push({
    _tag: "SessionStarted",
    sessionId,
    at: exported.info.time.created,
    ...opt("title", exported.info.title),
    ...opt("model", firstModel),
  })

  let lastMarker: Ids.MessageId | undefined
  let replayWatch: Watch | undefined

  for (const { index, message: exportedMessage } of sorted.success) {
    const { info } = exportedMessage
    const where = `messages[${index}] (${info.id})`
    if (info.sessionID !== undefined && info.sessionID !== sessionId)
      warnings.push(`${where}: sessionID ${info.sessionID} is not the exported session ${sessionId}`)
    for (const [p, part] of exportedMessage.parts.entries())
      if ("messageID" in part && part.messageID !== undefined && part.messageID !== info.id)
        warnings.push(`${where}.parts[${p}]: messageID ${part.messageID} is not its message's id`)
    flushPrunes(info.time.created)

    if (info.role === "user") {
      const parts = mapParts(exportedMessage.parts, userPart, `${where}: a user message`)
      const message: Message.UserMessage = {
        role: "user",
        id: info.id,
        createdAt: info.time.created,
        ...opt("agent", info.agent),
        ...opt("model", userModel(info.model)),
        ...opt("system", info.system),
        parts,
      }
      const watched = replayWatch
      replayWatch = undefined
      if (Message.compactionPartOf(message) !== undefined) {
        // A started compaction sets the marker's tail start itself (as when pivot records one live).
        const marker: Message.UserMessage = started.has(info.id)
          ? {
              ...message,
              parts: message.parts.map((p) => {
                if (p.type !== "compaction") return p
                const { tailStartId: _, ...rest } = p
                return rest
              }),
            }
          : message
        push({ _tag: "CompactionRequested", at: info.time.created, marker })
        lastMarker = info.id
      } else if (isContinue(message)) {
        const compaction = lastMarker === undefined ? undefined : Session.compaction(state, lastMarker)
        if (compaction?.status === "finished")
          push({ _tag: "ContinueRequested", at: info.time.created, markerId: compaction.markerId, message })
        else {
          warnings.push(`${where}: a compaction continue message without a finished compaction before it`)
          push({ _tag: "UserMessageAdded", at: info.time.created, message })
        }
      } else if (
        watched !== undefined &&
        replayShape(message.parts, false) === replayShape(watched.original.parts, true)
      ) {
        push({
          _tag: "TurnReplayed",
          at: info.time.created,
          markerId: watched.markerId,
          replayOf: watched.original.id,
          message,
        })
      } else push({ _tag: "UserMessageAdded", at: info.time.created, message })
      continue
    }

    const parts = mapParts(exportedMessage.parts, assistantPart, `${where}: an assistant message`)
    const message: Message.AssistantMessage = {
      role: "assistant",
      id: info.id,
      parentId: info.parentID,
      createdAt: info.time.created,
      ...opt("completedAt", info.time.completed),
      model: assistantModel(info),
      ...opt("agent", info.agent),
      ...opt("mode", info.mode),
      tokens: tokenUsage(info.tokens),
      ...opt("cost", info.cost),
      ...opt("finish", info.finish),
      ...opt("error", info.error === undefined ? undefined : messageError(info.error)),
      ...opt("summary", info.summary),
      parts,
    }
    const at = info.time.completed ?? info.time.created
    if (!ids.has(info.parentID)) warnings.push(`${where}: parent ${info.parentID} is not in the export`)

    const parent = Session.message(state, info.parentID)
    const compaction =
      info.summary === true && parent !== undefined && Message.isMarker(parent)
        ? Session.compaction(state, parent.id)
        : undefined
    if (compaction !== undefined && (compaction.status === "requested" || compaction.status === "failed")) {
      const failed = message.error !== undefined || message.finish === "error"
      if (!failed && message.finish === undefined) {
        warnings.push(`${where}: summary without finish (interrupted); recorded as a step, it forms no pivot`)
        push({ _tag: "AssistantStepRecorded", at, message })
      } else {
        const rebuilt = Plan.reconstruct(Window.messages(state.window), {
          markerId: compaction.markerId,
          overflow: compaction.overflow,
          tailStartId: tailStarts.get(compaction.markerId),
          stored: Conversation.messages(state.window.conversation),
        })
        warnings.push(...(rebuilt?.warnings ?? []))
        warnings.push(
          `compaction ${compaction.markerId}: OpenCode does not record the summariser prompt; CompactionStarted.prompt is ""`,
        )
        const plan = rebuilt?.plan ?? { head: [], tail: [] }
        push({
          _tag: "CompactionStarted",
          at: info.time.created,
          markerId: compaction.markerId,
          summaryId: info.id,
          model: message.model,
          plan,
          prompt: "",
        })
        push({
          _tag: failed ? "SummaryFailed" : "SummaryFinished",
          at,
          markerId: compaction.markerId,
          summary: message,
        })
        const original = plan.replayOf === undefined ? undefined : Session.message(state, plan.replayOf)
        if (!failed && compaction.auto && original?.role === "user")
          replayWatch = { markerId: compaction.markerId, original }
      }
    } else {
      if (compaction !== undefined)
        warnings.push(`${where}: another summary for compaction ${compaction.markerId}; recorded as a step`)
      push({ _tag: "AssistantStepRecorded", at, message })
    }

    for (const part of exportedMessage.parts)
      if (
        Export.isModeled(part) &&
        part.type === "tool" &&
        part.state.status === "completed" &&
        part.state.time?.compacted !== undefined
      )
        prunes.push({
          _tag: "PartCompacted",
          at: part.state.time.compacted,
          messageId: info.id,
          partId: part.id,
          tokens: PivotTokens.estimate(part.state.output),
        })
  }
  flushPrunes(Number.POSITIVE_INFINITY)

  // An input that renders to nothing is only an empty conversation, never sent; anything else is reported.
  const repaired = ValidWindow.violations(state.window).filter((v) => v.rule !== "empty-input")
  for (const v of repaired) warnings.push(`window: ${ValidWindow.format(v)}; repaired before it is sent`)
  return Result.succeed({
    sessionId,
    events,
    report: {
      messages: sorted.success.length,
      parts: partCount,
      window: state.window.visible.length,
      dropped,
      warnings,
      repaired,
    },
  })
}

/**
 * Imports a parsed `opencode export` document. Pure and all or nothing: either every event, or an `ImportError`
 * naming the first bad field.
 *
 * **Example**
 * ```ts
 * const imported = importSession(JSON.parse(text))
 * if (Result.isSuccess(imported)) Window.render(Session.fold(imported.success.events).window)
 * ```
 */
export const importSession = (exportJson: unknown): Result.Result<ImportResult, ImportError> => {
  const decoded = Export.decode(exportJson)
  return Result.isFailure(decoded) ? Result.fail(decoded.failure) : fromExport(decoded.success)
}

/** Imports the text of a saved export (a leading `Exporting session: …` line is allowed). */
export const importText = (text: string): Result.Result<ImportResult, ImportError> => {
  const parsed = Export.parseExportText(text)
  return Result.isFailure(parsed) ? Result.fail(parsed.failure) : importSession(parsed.success)
}
