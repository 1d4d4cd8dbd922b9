const SHUTDOWN_SIGNALS = ["SIGINT", "SIGTERM"] as const;

/** A pending shutdown request. */
export interface ShutdownRequest {
  /** Resolves with the reason once a signal (or `trigger`) asks to stop. */
  readonly requested: Promise<string>;
  /** Asks to stop (for example when stdin closed). */
  trigger(reason: string): void;
  /** Removes the signal listeners. */
  dispose(): void;
}

/**
 * Listens for Ctrl-C and SIGTERM. The first asks for a clean shutdown; a second one while it is
 * under way exits at once, for when something hangs. Listeners stay registered (`on`, not
 * `once`) until disposed, so the sandbox runner's own handlers see that someone handles the
 * signal and do not re-raise it, which would kill the process mid-shutdown.
 */
export function listenForShutdown(): ShutdownRequest {
  let resolveRequest: (reason: string) => void = () => {};
  const requested = new Promise<string>((resolve) => {
    resolveRequest = resolve;
  });
  let count = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    count += 1;
    if (count > 1) process.exit(signal === "SIGINT" ? 130 : 143);
    resolveRequest(signal);
  };
  for (const signal of SHUTDOWN_SIGNALS) process.on(signal, onSignal);
  return {
    requested,
    trigger: (reason) => {
      count += 1;
      resolveRequest(reason);
    },
    dispose() {
      for (const signal of SHUTDOWN_SIGNALS) process.off(signal, onSignal);
    },
  };
}
