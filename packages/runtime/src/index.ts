/** @pivot/runtime — the layer users embed: sessions over the store, compaction, the Summarizer port, plugins, config. */

/** The compaction process manager. */
export * as Compaction from "./Compaction.ts"
/** Configuration (`effect/Config`) and model limits. */
export * as Config from "./Config.ts"
/** The service users embed. */
export * from "./ContextManager.ts"
/** The usage HUD shown to the model. */
export * as Hud from "./Hud.ts"
/** The Judge port: the model answering a compaction's probes (optional). */
export * from "./Judge.ts"
/** The ledger of live sessions, caught up from the log (the HUD's cost line). */
export * as LiveLedger from "./LiveLedger.ts"
/** Pins: messages kept verbatim after every pivot (the user's API and the model's `context_pin`). */
export * as Pins from "./Pins.ts"
/** Projection plugins. */
export * as Plugins from "./Plugins.ts"
/** A compaction's probes: questions about the summarised span, answered by the judge, graded and recorded. */
export * as Probes from "./Probes.ts"
/** `context_recall`: re-reading pruned outputs and summaries, recorded. */
export * as Recall from "./Recall.ts"
/** The runtime's own events (defined in core's catalog). */
export * as RuntimeEvents from "./RuntimeEvents.ts"
/** The runtime's fold beside core's session state. */
export * as RuntimeState from "./RuntimeState.ts"
/** The command handler over the event store. */
export * as Sessions from "./Sessions.ts"
/** How a session stands: its usage, the HUD's text, what to do next. */
export * as Status from "./Status.ts"
/** The built-in context strategies by name, and the options that select each. */
export * as Strategies from "./Strategies.ts"
/** The Summarizer port. */
export * from "./Summarizer.ts"
/** Replays a recorded session under other strategies: what it would have cost. */
export * as WhatIf from "./WhatIf.ts"
/** A what-if comparison as a table of text: its labels, formats and legend (the CLI's and the viewer's). */
export * as WhatIfTable from "./WhatIfTable.ts"
