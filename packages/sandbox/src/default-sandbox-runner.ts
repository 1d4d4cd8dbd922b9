import { SandboxRunner } from "./sandbox-runner.js";

/**
 * The default runner (the reference's `sandboxRunner` singleton). Creating it costs nothing:
 * its provider is resolved on the first run (`SKILLBOX_SANDBOX_RUNTIME`, else the first
 * installed one) and cached.
 */
export const sandboxRunner: SandboxRunner = new SandboxRunner();
