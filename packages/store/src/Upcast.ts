/**
 * Event versioning. Stored events are never rewritten: each carries the schema version it was written with, and on
 * read a chain of upcasters lifts its data, one version at a time, to the version the current schema describes,
 * which then decodes it. Generic: the caller supplies the schemas (per event type) and the upcasters.
 *
 * **Example**
 *
 * ```ts
 * import { Schema } from "effect"
 * import { Upcast } from "@pivot/store"
 *
 * const decode = Upcast.makeDecoder({
 *   schemas: { Renamed: { version: 2, schema: Schema.Struct({ title: Schema.String }) } },
 *   upcasters: [{ type: "Renamed", fromVersion: 1, up: (data: any) => ({ title: data.name }) }],
 * })
 * decode(recorded) // Result: { ...recorded, type: "Renamed", data: { title } } or a typed error
 * ```
 */
import * as Result from "effect/Result"
import * as Schema from "effect/Schema"
import * as SchemaIssue from "effect/SchemaIssue"
import type { RecordedEvent } from "./Event.ts"
import { MalformedEvent } from "./StoreError.ts"

/** Lifts the data of one event type from schema version `fromVersion` to `fromVersion + 1`. Pure. */
export interface Upcaster {
  readonly type: string
  readonly fromVersion: number
  readonly up: (data: unknown) => unknown
}

/** The current schema of one event type and its version (an integer ≥ 1). */
export interface EventSchema {
  readonly version: number
  readonly schema: Schema.ConstraintDecoder<unknown>
  /**
   * A faster decoder of this version's data, tried before the schema: the value the schema decodes the data to, or
   * `undefined` to leave the data to the schema (which then decodes it or names what is wrong). It must never answer
   * data the schema refuses, nor answer another value than the schema's.
   */
  readonly fast?: ((data: unknown) => unknown) | undefined
}

/** The current schemas, by event type. */
export type Schemas = Readonly<Record<string, EventSchema>>

/** What the decode step needs: the current schemas and the upcasters from older versions. */
export interface DecodeOptions<S extends Schemas> {
  readonly schemas: S
  readonly upcasters?: ReadonlyArray<Upcaster> | undefined
}

/** A recorded event whose data has been upcast and decoded; a union over the schemas' types. */
export type Decoded<S extends Schemas> = {
  readonly [K in keyof S & string]: Omit<RecordedEvent, "type" | "data"> & {
    readonly type: K
    readonly data: S[K]["schema"]["Type"]
  }
}[keyof S & string]

/** The stored event's type has no schema. */
export class UnknownEventType extends Schema.TaggedError<UnknownEventType>()("UnknownEventType", {
  type: Schema.String,
}) {
  override get message(): string {
    return `unknown event type ${this.type}`
  }
}

/** The stored event was written with a newer schema version than this program supports. */
export class EventFromNewerVersion extends Schema.TaggedError<EventFromNewerVersion>()("EventFromNewerVersion", {
  type: Schema.String,
  version: Schema.Number,
  supported: Schema.Number,
}) {
  override get message(): string {
    return `${this.type} v${this.version} is newer than the supported v${this.supported}`
  }
}

/** No upcaster lifts this event type from this version, so the chain to the current schema is broken. */
export class MissingUpcaster extends Schema.TaggedError<MissingUpcaster>()("MissingUpcaster", {
  type: Schema.String,
  fromVersion: Schema.Number,
}) {
  override get message(): string {
    return `no upcaster for ${this.type} from v${this.fromVersion}`
  }
}

/** Why a recorded event could not be decoded. */
export type DecodeError = UnknownEventType | EventFromNewerVersion | MissingUpcaster | MalformedEvent

const formatPath = (path: ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>): string => {
  let out = "data"
  for (const segment of path) {
    const key = typeof segment === "object" && segment !== null ? segment.key : segment
    if (typeof key === "number") out += `[${key}]`
    else if (typeof key === "string" && /^[A-Za-z_$][\w$]*$/.test(key)) out += `.${key}`
    else out += `[${JSON.stringify(String(key))}]`
  }
  return out
}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

/**
 * Builds the decode step once (indexes the upcasters, prepares the decoders) for many events. Throws if two
 * upcasters claim the same type and version, which is a programming error.
 */
export const makeDecoder = <S extends Schemas>(
  options: DecodeOptions<S>,
): ((recorded: RecordedEvent) => Result.Result<Decoded<S>, DecodeError>) => {
  const upcasters = new Map<string, Upcaster>()
  for (const upcaster of options.upcasters ?? []) {
    const key = `${upcaster.fromVersion}:${upcaster.type}`
    if (upcasters.has(key)) throw new Error(`two upcasters for ${upcaster.type} from v${upcaster.fromVersion}`)
    upcasters.set(key, upcaster)
  }
  const decoders = new Map<string, (input: unknown) => Result.Result<unknown, Schema.SchemaError>>()
  for (const [type, entry] of Object.entries(options.schemas)) {
    decoders.set(type, Schema.decodeUnknownResult(entry.schema))
  }

  return (recorded) => {
    const where = `${recorded.id} (${recorded.type} v${recorded.version}, position ${recorded.position})`
    const entry = Object.hasOwn(options.schemas, recorded.type) ? options.schemas[recorded.type] : undefined
    const decode = decoders.get(recorded.type)
    if (entry === undefined || decode === undefined) return Result.fail(new UnknownEventType({ type: recorded.type }))
    const version = recorded.version
    if (!Number.isInteger(version) || version < 1) {
      return Result.fail(new MalformedEvent({ path: "version", message: `${where}: version must be an integer ≥ 1` }))
    }
    if (version > entry.version) {
      return Result.fail(new EventFromNewerVersion({ type: recorded.type, version, supported: entry.version }))
    }
    let data = recorded.data
    for (let from = version; from < entry.version; from++) {
      const upcaster = upcasters.get(`${from}:${recorded.type}`)
      if (upcaster === undefined) return Result.fail(new MissingUpcaster({ type: recorded.type, fromVersion: from }))
      try {
        data = upcaster.up(data)
      } catch (cause) {
        const message = `${where}: upcaster from v${from} failed: ${cause instanceof Error ? cause.message : String(cause)}`
        return Result.fail(new MalformedEvent({ path: "data", message }))
      }
    }
    const fast = entry.fast?.(data)
    if (fast !== undefined) return Result.succeed({ ...recorded, data: fast } as Decoded<S>)
    const decoded = decode(data)
    if (Result.isFailure(decoded)) {
      const first = formatter(decoded.failure.issue).issues[0]
      return Result.fail(
        new MalformedEvent({
          path: formatPath(first?.path ?? []),
          message: `${where}: ${first?.message ?? decoded.failure.message}`,
        }),
      )
    }
    return Result.succeed({ ...recorded, data: decoded.success } as Decoded<S>)
  }
}

/** Upcasts and decodes one recorded event with the given schemas and upcasters. Pure. */
export const decodeRecorded = <S extends Schemas>(
  recorded: RecordedEvent,
  options: DecodeOptions<S>,
): Result.Result<Decoded<S>, DecodeError> => makeDecoder(options)(recorded)
