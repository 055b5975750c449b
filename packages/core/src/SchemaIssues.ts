/**
 * Schema errors at a boundary, as one line: effect's own `SchemaError` prints its whole issue tree (hundreds of lines
 * for one missing key). `oneLine` names the first problem's field and what was wrong with it.
 */
import type * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"

const format = SchemaIssue.makeFormatterStandardSchemaV1()

/** The first problem of a schema error in one line: `path.to.field: what is wrong` (`prefix` goes before the path). */
export const oneLine = (error: Schema.SchemaError, prefix?: string): string => {
  const issue = format(error.issue).issues[0]
  const keys = (issue?.path ?? []).map((p) => String(typeof p === "object" && p !== null ? p.key : p))
  const path = [...(prefix === undefined ? [] : [prefix]), ...keys].join(".")
  const what = (issue?.message ?? error.message).split("\n")[0]!
  return path === "" ? what : `${path}: ${what}`
}
