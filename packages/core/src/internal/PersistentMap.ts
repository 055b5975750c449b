/**
 * A persistent map with O(1) reads and writes on the newest version: one mutable `Map` is shared by all versions,
 * and every older version keeps the one-entry difference to the version after it ("rerooting", Baker's trick).
 * Reading an old version first moves the `Map` there, which costs the number of versions in between; a fold that
 * only ever extends its newest state never pays that. Observably it behaves as an immutable map.
 */

const ABSENT: unique symbol = Symbol("absent")

interface Diff<K, V> {
  readonly key: K
  readonly value: V | typeof ABSENT
  readonly next: PersistentMap<K, V>
}

/** An immutable map from K to V. */
export class PersistentMap<K, V> {
  /** The shared `Map` when this is the current version; otherwise how it differs from a newer one. */
  private data: Map<K, V> | Diff<K, V>
  /** Number of entries. */
  readonly size: number

  private constructor(data: Map<K, V> | Diff<K, V>, size: number) {
    this.data = data
    this.size = size
  }

  /** The empty map. */
  static empty<K, V>(): PersistentMap<K, V> {
    return new PersistentMap<K, V>(new Map(), 0)
  }

  /** A map of the given entries (a later entry for a key wins). */
  static fromEntries<K, V>(entries: Iterable<readonly [K, V]>): PersistentMap<K, V> {
    const map = new Map<K, V>(entries)
    return new PersistentMap<K, V>(map, map.size)
  }

  /** The entries of this version, in the order their keys were first set (O(n)). */
  entries(): Array<[K, V]> {
    return [...this.reroot().entries()]
  }

  /** Makes this version the one holding the shared `Map`, and returns it. */
  private reroot(): Map<K, V> {
    if (this.data instanceof Map) return this.data
    const path: Array<PersistentMap<K, V>> = []
    let at: PersistentMap<K, V> = this
    while (!(at.data instanceof Map)) {
      path.push(at)
      at = at.data.next
    }
    const map = at.data
    for (let i = path.length - 1; i >= 0; i--) {
      const version = path[i]!
      const diff = version.data as Diff<K, V>
      const previous = map.has(diff.key) ? (map.get(diff.key) as V) : ABSENT
      if (diff.value === ABSENT) map.delete(diff.key)
      else map.set(diff.key, diff.value)
      diff.next.data = { key: diff.key, value: previous, next: version }
      version.data = map
    }
    return map
  }

  /**
   * The keys whose values may differ between `older` and this version (a superset: a key set back to its old value is
   * listed), found from the differences the two versions keep to the shared `Map` without moving it; undefined when
   * they do not share one or when either is more than `limit` changes away from it.
   */
  keysChangedSince(older: PersistentMap<K, V>, limit: number): Array<K> | undefined {
    if (older === this) return []
    const walk = (from: PersistentMap<K, V>, stop: PersistentMap<K, V>) => {
      const keys: Array<K> = []
      let at = from
      while (!(at.data instanceof Map)) {
        if (at === stop) return { keys, met: true, map: undefined }
        if (keys.length >= limit) return undefined
        keys.push(at.data.key)
        at = at.data.next
      }
      return { keys, met: at === stop, map: at.data }
    }
    // On the path from one version to the one holding the `Map`, the other's values differ only at the keys passed.
    const fromOlder = walk(older, this)
    if (fromOlder === undefined) return undefined
    if (fromOlder.met) return fromOlder.keys
    const fromThis = walk(this, older)
    if (fromThis === undefined) return undefined
    if (fromThis.met) return fromThis.keys
    // Both reach the `Map` holder by their own paths: they differ only at keys on either path.
    return fromOlder.map === fromThis.map ? [...fromOlder.keys, ...fromThis.keys] : undefined
  }

  /** The value for a key, if any. */
  get(key: K): V | undefined {
    return this.reroot().get(key)
  }

  /** Whether the key has a value. */
  has(key: K): boolean {
    return this.reroot().has(key)
  }

  /** A new version with the key set; this version is unchanged. */
  set(key: K, value: V): PersistentMap<K, V> {
    // An empty version (typically a shared initial state) starts a map of its own: folds of different sessions from
    // the same initial state must not share, or each step would reroot across the other session's versions.
    if (this.size === 0) return new PersistentMap<K, V>(new Map([[key, value]]), 1)
    const map = this.reroot()
    const had = map.has(key)
    const previous = had ? (map.get(key) as V) : ABSENT
    map.set(key, value)
    const next = new PersistentMap<K, V>(map, had ? this.size : this.size + 1)
    this.data = { key, value: previous, next }
    return next
  }
}
