/** @pivot/core — the pure domain of a session's context window. */
export * as Config from "./Config.ts"
export * as Ids from "./Ids.ts"
export * as Message from "./Message.ts"
export * as Model from "./Model.ts"
export * as Tokens from "./Tokens.ts"
