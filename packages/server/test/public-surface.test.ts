import { fileURLToPath } from "node:url";
import { describePublicSurface } from "@skillbox/test-helpers/public-surface";

/**
 * Every runtime export of `@skillbox/server`, sorted. Adding one is a deliberate edit of this list:
 * what users import is documented in a README; what only this package's own modules need stays unexported.
 */
const PUBLIC_EXPORTS = [
  "BoundedTaskStore",
  "DEFAULT_MAX_BYTES_PER_TASK",
  "DEFAULT_MAX_SESSIONS",
  "DEFAULT_MAX_SESSIONS_PER_OWNER",
  "DEFAULT_MAX_TASKS",
  "DEFAULT_MAX_TASK_BYTES",
  "DEFAULT_SESSION_IDLE_TIMEOUT_MS",
  "SERVER_ERROR_CODES",
  "SkillAgentExecutor",
  "agentCardFor",
  "createA2aRequestHandler",
  "createHttpApp",
  "createLoaderActivity",
  "createMcpHttpHandler",
  "createMcpServer",
  "parseApiKeys",
  "readSkillCall",
  "serveMcpStdio",
  "startHttpServer",
];

describePublicSurface({
  packageName: "@skillbox/server",
  packageRoot: fileURLToPath(new URL("..", import.meta.url)),
  exports: PUBLIC_EXPORTS,
  importSource: () => import("@skillbox/server"),
});
