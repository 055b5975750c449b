/** The compile cache's folder for this environment and platform, or undefined for none (compileCache.mjs). */
export declare const compileCacheDir: (
  env: Readonly<Record<string, string | undefined>>,
  platform: string,
) => string | undefined
