/** Vite resolve options that pick each package's `@pivot/source` export before its compiled one. */
export declare const sourceResolve: {
  resolve: {
    conditions: string[]
  }
  ssr: {
    resolve: {
      conditions: string[]
    }
  }
}
