/**
 * Equality of two JSON-like values as the JSON they serialise to, whatever their keys' order: a message decoded from
 * the store has its schema's key order, a retried one its caller's, and both are the same message. Keys whose value
 * is `undefined` are absent (as in `JSON.stringify`).
 */
export const jsonEqual = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  if (Array.isArray(a)) {
    const other = b as ReadonlyArray<unknown>
    return a.length === other.length && a.every((item, i) => jsonEqual(item, other[i]))
  }
  const left = a as Record<string, unknown>
  const right = b as Record<string, unknown>
  const keys = (o: Record<string, unknown>) => Object.keys(o).filter((k) => o[k] !== undefined)
  const leftKeys = keys(left)
  if (leftKeys.length !== keys(right).length) return false
  return leftKeys.every((k) => Object.hasOwn(right, k) && jsonEqual(left[k], right[k]))
}
