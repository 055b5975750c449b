/** @pivot/opencode — imports an OpenCode session export (`opencode export <id>`) into pivot's events. */

export * as Export from "./Export.ts"
export * as Import from "./Import.ts"
export * as ImportError from "./ImportError.ts"
export * as Plan from "./Plan.ts"
