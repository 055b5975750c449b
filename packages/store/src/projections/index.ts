// `Projections`: users' read models (definitions, the service, its errors) and the store layers that run them.
export * from "./layers.ts"
export * from "./Projections.ts"
