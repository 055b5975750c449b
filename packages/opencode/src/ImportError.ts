/**
 * Why an OpenCode export could not be imported: the bad field's path and what was wrong with it.
 */
import * as Schema from "effect/Schema"

/**
 * The export is malformed. `path` names the field (`messages[3].parts[1].state.status`), or the text position
 * (`line 3, column 5`) when the input is not JSON; it is empty when the whole input is wrong.
 */
export class ImportError extends Schema.TaggedError<ImportError>()("ImportError", {
  path: Schema.String,
  reason: Schema.String,
}) {
  override get message(): string {
    return this.path === ""
      ? `Invalid OpenCode export: ${this.reason}`
      : `Invalid OpenCode export at ${this.path}: ${this.reason}`
  }
}

/** Formats a schema issue path the way a JavaScript reader writes it: `messages[3].parts[1].state`. */
export const formatPath = (path: ReadonlyArray<PropertyKey>): string => {
  let out = ""
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`
    else if (typeof key === "string" && /^[A-Za-z_$][\w$]*$/.test(key)) out += out === "" ? key : `.${key}`
    else out += `[${JSON.stringify(String(key))}]`
  }
  return out
}
