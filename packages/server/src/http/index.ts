export { createHttpApp, type HttpAppOptions } from "./create-http-app.js";
export type { HttpErrorBody } from "./http-error.js";
export { parseApiKeys } from "./parse-api-keys.js";
export type { LatestSkillView, SkillView } from "./skill-view.js";
export { type RunningHttpServer, type StartHttpServerOptions, startHttpServer } from "./start-http-server.js";
