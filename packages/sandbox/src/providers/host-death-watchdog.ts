import { type ChildProcess, spawn } from "node:child_process";
import { SkillboxError } from "@skillbox/core";

/**
 * Removes the sandboxes it was told about once its standard input closes, that is once the
 * host died, however it died (`kill -9` included: the kernel closes the pipe). Lines are
 * `+<id>` (started) and `-<id>` (ended). It runs in a session of its own and ignores the
 * terminal's signals, so Ctrl-C on the host's process group does not take it down first.
 * POSIX sh rather than node: it costs a megabyte, not forty, for the host's whole life.
 */
const WATCHDOG_SCRIPT = [
  "trap '' HUP INT TERM PIPE",
  "live=' '",
  "while IFS= read -r line; do",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion, not a template.
  "  id=${line#?}",
  "  case $line in",
  '    +*) live="$live$id " ;;',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansions, not a template.
  '    -*) case $live in *" $id "*) live="${live%%" $id "*} ${live#*" $id "}" ;; esac ;;',
  "  esac",
  "done",
  "set -f",
  '[ "$live" = \' \' ] || exec "$@" $live',
].join("\n");

/**
 * What a sandbox id may be (the runner makes `skillbox-<uuid>`): a container name's characters,
 * not starting with `-`. The watchdog splits its list of ids on white space and hands it to `rm`,
 * so a space, a line break or a leading `-` (`--all`) would name other containers.
 */
const SANDBOX_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** How long a watchdog with nothing to watch stays, so back-to-back runs share one. */
const IDLE_EXIT_MS = 5_000;

/** Options of {@link createHostDeathWatchdog}. */
export interface HostDeathWatchdogOptions {
  /** The command that removes sandboxes, completed with their ids (`podman rm --force --time 0`). */
  removeCommand: string[];
  /** The command's environment (what the CLI needs to find its engine). */
  env: Record<string, string>;
}

/** Tells a watchdog process which sandboxes to remove should this process die. */
export interface HostDeathWatchdog {
  /** Protects a sandbox about to start; throws `SANDBOX_CONFIG_INVALID` for an id that is not a container name. */
  watch(id: string): void;
  /** Forgets a sandbox that ended and was removed. */
  release(id: string): void;
  /** The watchdog process's pid while one runs (for tests). */
  readonly pid: number | undefined;
}

/**
 * A watchdog for sandboxes whose engine keeps them running when their client dies (podman,
 * docker): the host's own exit handlers cannot run after SIGKILL, so a separate process
 * holding the other end of a pipe does the removal. Started on the first sandbox, gone a few
 * seconds after the last one ended. `undefined` where there is no POSIX shell (Windows).
 */
function createHostDeathWatchdog(options: HostDeathWatchdogOptions): HostDeathWatchdog | undefined {
  if (process.platform === "win32") return undefined;
  const live = new Set<string>();
  let child: ChildProcess | undefined;
  let idleTimer: NodeJS.Timeout | undefined;

  const send = (line: string) => {
    child?.stdin?.write(`${line}\n`);
  };

  const start = () => {
    const started = spawn(
      "/bin/sh",
      ["-c", WATCHDOG_SCRIPT, "skillbox-sandbox-watchdog", ...options.removeCommand],
      {
        detached: true,
        env: options.env,
        stdio: ["pipe", "ignore", "ignore"],
      },
    );
    child = started;
    const forget = () => {
      if (child === started) child = undefined;
    };
    started.once("error", forget);
    started.once("exit", forget);
    started.stdin?.on("error", forget);
    // Neither the process nor its pipe keeps the host's event loop alive.
    started.unref();
    (started.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    for (const id of live) send(`+${id}`);
  };

  return {
    watch(id) {
      if (!SANDBOX_ID.test(id)) {
        throw new SkillboxError(
          "SANDBOX_CONFIG_INVALID",
          `sandbox id ${JSON.stringify(id)} is not a container name: use letters, digits, "_", "." and "-", starting with a letter or digit (the runner's ids are skillbox-<uuid>)`,
          { data: { id } },
        );
      }
      clearTimeout(idleTimer);
      live.add(id);
      if (child === undefined) start();
      else send(`+${id}`);
    },
    release(id) {
      if (!live.delete(id)) return;
      send(`-${id}`);
      if (live.size > 0) return;
      clearTimeout(idleTimer);
      idleTimer = setTimeout(() => {
        if (live.size > 0) return;
        // End of input with nothing live: the watchdog exits without running anything.
        child?.stdin?.end();
        child = undefined;
      }, IDLE_EXIT_MS);
      idleTimer.unref();
    },
    get pid() {
      return child?.pid;
    },
  };
}

const shared = new Map<string, HostDeathWatchdog | undefined>();

/**
 * The host's one watchdog for an engine (a remove command and its environment): every provider of
 * that engine in this process shares it, so a host runs one watchdog per engine, not one per
 * provider or runner.
 */
export function sharedHostDeathWatchdog(options: HostDeathWatchdogOptions): HostDeathWatchdog | undefined {
  const key = JSON.stringify([options.removeCommand, Object.entries(options.env).sort()]);
  if (!shared.has(key)) shared.set(key, createHostDeathWatchdog(options));
  return shared.get(key);
}
