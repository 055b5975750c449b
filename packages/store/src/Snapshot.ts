/**
 * Snapshot integrity: the checksum the store writes beside each snapshot, and the check a reader makes before
 * trusting one. A mismatch means the bytes changed after they were written (a torn write, a disk fault, an edit).
 *
 * The checksum guards against accidents, not against someone who can write the store (docs/security.md): it is not
 * keyed, so a cryptographic hash bought nothing a fast one does not, and cost a restart loading `node:crypto` inside
 * its first call (issue 32, ADR 0059). Snapshots are checksummed with `fast` (`fnv1a-2x32:` and 16 hex digits); a
 * checksum of 64 hex digits is the SHA-256 earlier versions wrote, still checked as such (then `node:crypto` loads).
 */
import type { StoredSnapshot } from "./Event.ts"
import { crypto } from "./internal/nodeCrypto.ts"

/** The prefix naming the fast checksum's algorithm. */
export const FAST = "fnv1a-2x32:"

/** Murmur3's finaliser: every input bit reaches every output bit (a bijection of 32-bit integers). */
const avalanche = (h: number): number => {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b)
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35)
  return (h ^ (h >>> 16)) >>> 0
}

const hex8 = (n: number): string => n.toString(16).padStart(8, "0")

/**
 * Two FNV-1a lanes of 32 bits over the string's UTF-16 code units, with other primes and seeds, each finalised with
 * the length. Each step (`x → (x ^ unit) · odd`) is a bijection, so two strings of one length that differ in a single
 * code unit never share a lane; anything else collides with a chance of about 2⁻⁶⁴.
 */
export const fast = (data: string): string => {
  let a = 0x811c9dc5
  let b = 0x9e3779b9
  for (let i = 0; i < data.length; i++) {
    const unit = data.charCodeAt(i)
    a = Math.imul(a ^ unit, 0x01000193)
    b = Math.imul(b ^ unit, 0x5bd1e995)
  }
  return `${FAST}${hex8(avalanche(a ^ data.length))}${hex8(avalanche(b ^ Math.imul(data.length, 0x27d4eb2f)))}`
}

/** The SHA-256 of a snapshot's data, hex: what versions before ADR 0059 wrote. */
export const sha256 = (data: string): string => crypto().createHash("sha256").update(data).digest("hex")

/** The checksum written beside a snapshot's data (`fast`). */
export const checksum = (data: string): string => fast(data)

const SHA256 = /^[0-9a-f]{64}$/

/** Whether a stored snapshot's data is what was written, by the algorithm its checksum names. */
export const intact = (snapshot: StoredSnapshot): boolean =>
  snapshot.checksum.startsWith(FAST)
    ? fast(snapshot.data) === snapshot.checksum
    : SHA256.test(snapshot.checksum) && sha256(snapshot.data) === snapshot.checksum
