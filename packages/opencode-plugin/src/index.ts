/**
 * @pivot/opencode-plugin — pivot inside OpenCode. The default export is the OpenCode plugin: one line in
 * opencode.json (`"plugin": ["@pivot/opencode-plugin"]`, or a `file://` URL of this file) records the live session as
 * pivot events, adds the usage HUD, `context_recall` and `context_compact`, and pivot's additions to OpenCode's own
 * compaction. See docs/opencode.md.
 *
 * Only the plugin is exported (and types): OpenCode may treat a module's function exports as plugins.
 */
import type { Hooks, PluginInput } from "./OpenCode.ts"
import { make, type Options } from "./Plugin.ts"

export type { Hooks, PluginInput } from "./OpenCode.ts"
export type { Options } from "./Plugin.ts"

/** The plugin, as OpenCode calls it: `(input, options) => hooks`. */
const PivotPlugin = (input: PluginInput, options?: Options): Promise<Hooks> => make(input, options ?? {})

export default PivotPlugin
