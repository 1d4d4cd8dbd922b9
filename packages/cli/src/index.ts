export {
  defineConfig,
  type SkillboxA2aTasksConfig,
  type SkillboxConfig,
  type SkillboxSandboxConfig,
  type SkillboxServerConfig,
} from "./config/define-config.js";
export { main } from "./main.js";
