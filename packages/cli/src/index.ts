export { CLI_ERROR_CODES, type CliErrorCode } from "./cli-error-codes.js";
export {
  defineConfig,
  type SkillboxA2aTasksConfig,
  type SkillboxConfig,
  type SkillboxSandboxConfig,
  type SkillboxServerConfig,
  type SkillboxTelemetryConfig,
  type SkillboxWorkerConfig,
} from "./config/define-config.js";
export { main } from "./main.js";
