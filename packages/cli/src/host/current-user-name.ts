import { userInfo } from "node:os";

/**
 * Who runs this command, as `skillbox approve` / `reject` record the decider by default: the OS
 * user, else `$USER`, else `cli` (a container may run as a uid without a passwd entry).
 */
export function currentUserName(): string {
  try {
    const name = userInfo().username;
    if (name !== "") return name;
  } catch {
    // No passwd entry for this uid: fall through to the environment.
  }
  return process.env.USER || process.env.USERNAME || "cli";
}
