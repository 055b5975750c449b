/** @pivot/opencode — imports an OpenCode session export (`opencode export <id>`) into pivot's events. */

export * as Export from "./Export.ts"
export * as Import from "./Import.ts"
export * as ImportError from "./ImportError.ts"
export * as Plan from "./Plan.ts"
export * as ToExport from "./ToExport.ts"

// The copy of effect this package loaded, so a second copy is named when it breaks a decode (core's EffectCopies).
import { EffectCopies } from "@pivot/core"
import * as Schema from "effect/Schema"

EffectCopies.register("@pivot/opencode", Schema.String)
