/**
 * Settings a user's npm or pnpm would take from their own config and that the test keeps: the
 * shared cache and store (so CI does not download twice) and the registry.
 */
const KEPT_PACKAGE_MANAGER_SETTINGS = new Set([
  "npm_config_cache",
  "npm_config_registry",
  "npm_config_store_dir",
  "npm_config_userconfig",
]);

/** Whether `name` is a variable the workspace's own tooling set, which a user's shell would not have. */
function isWorkspaceVariable(name: string): boolean {
  const lower = name.toLowerCase();
  if (KEPT_PACKAGE_MANAGER_SETTINGS.has(lower)) return false;
  return (
    // pnpm's `.bin` shims set NODE_PATH to the workspace's store: with it, a handler finds
    // packages it never declared (the zod reproduction of the issue).
    name === "NODE_PATH" ||
    name === "INIT_CWD" ||
    lower.startsWith("npm_") ||
    lower.startsWith("pnpm_config_") ||
    // What pnpm sets for the scripts it runs; PNPM_HOME stays: it decides where pnpm's store is.
    name === "PNPM_SCRIPT_SRC_DIR" ||
    name === "PNPM_PACKAGE_NAME" ||
    name.startsWith("SKILLBOX_") ||
    name.startsWith("VITEST") ||
    name === "FORCE_COLOR"
  );
}

/**
 * The environment of a user's shell, derived from this process's: without what `pnpm test`,
 * vitest and the workspace add, with colours off so output can be read as text.
 */
export function userEnvironment(): NodeJS.ProcessEnv {
  const environment: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!isWorkspaceVariable(name)) environment[name] = value;
  }
  // vitest sets these for the code it tests, not for the commands a test spawns.
  if (environment.NODE_ENV === "test") delete environment.NODE_ENV;
  if (environment.TEST === "true") delete environment.TEST;
  environment.NO_COLOR = "1";
  return environment;
}
