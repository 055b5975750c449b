/** @pivot/mcp — pivot's context tools over MCP (`context_recall`, `context_usage`), read-only over any pivot store. */

export * as Server from "./Server.ts"
export * as Tools from "./Tools.ts"

// The copy of effect this package loaded, so a second copy is named when it breaks a decode (core's EffectCopies).
import { EffectCopies } from "@pivot/core"
import * as Schema from "effect/Schema"

EffectCopies.register("@pivot/mcp", Schema.String)
