// Types of bundle-catalog.mjs (plain JavaScript, like the bundle script that uses it) for the test that imports it.
export declare const CATALOG_ENTRY: RegExp
export declare const EXPORTS: ReadonlyArray<string>
export declare const catalogModule: (catalog: unknown) => string
export declare const catalogAsJson: () => {
  readonly name: string
  readonly load: (id: string) => Promise<{ readonly code: string; readonly moduleType: "js" } | null>
}
