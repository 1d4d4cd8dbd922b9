export type { A2aOptions } from "./a2a-options.js";
export { type AgentCardOptions, agentCardFor } from "./agent-card-for.js";
export {
  BoundedTaskStore,
  type BoundedTaskStoreOptions,
  DEFAULT_MAX_BYTES_PER_TASK,
  DEFAULT_MAX_TASK_BYTES,
  DEFAULT_MAX_TASKS,
} from "./bounded-task-store.js";
export { type A2aRequestHandlerOptions, createA2aRequestHandler } from "./create-a2a-request-handler.js";
export { readSkillCall, type SkillCall } from "./read-skill-call.js";
export { SkillAgentExecutor, type SkillAgentExecutorOptions } from "./skill-agent-executor.js";
