// Node scripts run inside a sandbox to observe its isolation, shared by the provider tests.

/** `node -e script`. */
export function nodeCommand(script: string): string[] {
  return ["node", "-e", script];
}

/** Prints the error code of a connection attempt to a documentation address (192.0.2.1). */
export const NETWORK_PROBE =
  'require("net").connect(80, "192.0.2.1").on("error", (error) => console.log(error.code))';

/**
 * Prints, as JSON, whether the root, the work dir and /tmp are writable, the working
 * directory, the user and group, the effective capabilities and the no-new-privileges flag.
 */
export function filesystemAndPrivilegeProbe(rootFile: string, workDir: string): string {
  return `
    const fs = require("fs");
    const attempt = (path) => { try { fs.writeFileSync(path, "x"); return "ok"; } catch (error) { return error.code; } };
    const status = Object.fromEntries(
      fs.readFileSync("/proc/self/status", "utf8").split("\\n").map((line) => line.split(":\\t")),
    );
    console.log(JSON.stringify({
      root: attempt(${JSON.stringify(rootFile)}),
      workDir: attempt(${JSON.stringify(`${workDir}/written`)}),
      tmp: attempt("/tmp/written"),
      cwd: process.cwd(),
      uid: process.getuid(),
      gid: process.getgid(),
      capEff: status.CapEff,
      noNewPrivs: status.NoNewPrivs,
    }));
  `;
}

/** What {@link filesystemAndPrivilegeProbe} prints in a hardened sandbox. */
export function hardenedProbeResult(workDir: string) {
  return {
    root: "EROFS",
    workDir: "ok",
    tmp: "ok",
    cwd: workDir,
    uid: 65534,
    gid: 65534,
    capEff: "0000000000000000",
    noNewPrivs: "1",
  };
}
