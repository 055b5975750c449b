/** The viewer's typed failures: each becomes one HTTP status and one line a person can act on. */
import { Schema } from "effect"

/** A session or version the store does not have: a 404. */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", { message: Schema.String }) {}

/** A malformed request (a bad session id, version or query): a 400. */
export class BadRequest extends Schema.TaggedError<BadRequest>()("BadRequest", { message: Schema.String }) {}

/** The store failed while serving (unreadable, an event this program cannot read): a 500 with the reason. */
export class StoreFailed extends Schema.TaggedError<StoreFailed>()("StoreFailed", { message: Schema.String }) {}

/** The viewer could not start: the source cannot be opened, or the address is wrong or taken. */
export class StartupError extends Schema.TaggedError<StartupError>()("StartupError", {
  message: Schema.String,
}) {}

/** Any failure while answering a request. */
export type RequestError = NotFound | BadRequest | StoreFailed

/** An error's message on one line. */
export const describe = (error: unknown): string =>
  (error instanceof Error || (typeof error === "object" && error !== null && "message" in error)
    ? String((error as { message: unknown }).message)
    : String(error)
  ).replace(/\s*\n\s*/g, " ")
