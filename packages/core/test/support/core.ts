/** Re-exports for tests, with the few types they name. */
export * from "@pivot/core"
export type { MessageId } from "../../src/Ids.ts"
