/**
 * `@skillbox/sandbox/internal`: what Skillbox's own packages and tests use of the sandbox and
 * that is not part of its public API (how a host names itself on the sandboxes it starts).
 *
 * Not semver-stable: any release may change or remove what is here. Applications import
 * `@skillbox/sandbox`.
 */
export { currentSandboxOwner, formatSandboxOwner, type SandboxOwner } from "./sandbox-owner.js";
