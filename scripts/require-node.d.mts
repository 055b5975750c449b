// Types of require-node.mjs (plain JavaScript, so an old Node can parse it) for the tests that import it.
export declare const minimum: string
export declare const tooOld: (version: string, least?: string) => boolean
export declare const message: (version: string) => string
