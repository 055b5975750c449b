/**
 * Snapshot integrity: the checksum the store writes beside each snapshot, and the check a reader makes before
 * trusting one. A mismatch means the bytes changed after they were written (a torn write, a disk fault, an edit).
 */
import type { StoredSnapshot } from "./Event.ts"
import { crypto } from "./internal/nodeCrypto.ts"

/** The SHA-256 of a snapshot's data, hex. */
export const checksum = (data: string): string => crypto().createHash("sha256").update(data).digest("hex")

/** Whether a stored snapshot's data is what was written. */
export const intact = (snapshot: StoredSnapshot): boolean => checksum(snapshot.data) === snapshot.checksum
