import {
  type AddressPolicy,
  type AddressRefusal,
  AddressRefusedError,
  createGuardedLookup,
} from "@skillbox/core/handler";
import { Agent, buildConnector } from "undici";

/** An undici Agent that refuses non-public addresses when it connects, and remembers why. */
export interface GuardedAgent {
  agent: Agent;
  /** The last refusal, so a `fetch failed` error can be traced back to it whatever wraps it. */
  refusal(): AddressRefusal | undefined;
}

/**
 * Creates a fresh Agent (one per execution, so no connection outlives the checks made for it) whose
 * connector checks every address right before connecting: IP literals directly, host names through
 * a `lookup` that resolves all addresses and refuses the host when any of them is not allowed. The
 * socket then connects only to addresses that were checked, so DNS rebinding between a check and
 * the connect cannot slip through, and every redirect hop goes through the same connector.
 */
export function createGuardedAgent(policy: AddressPolicy): GuardedAgent {
  let lastRefusal: AddressRefusal | undefined;
  const refuse = (refusal: AddressRefusal) => {
    lastRefusal = refusal;
    return new AddressRefusedError(refusal);
  };

  const guardedLookup = createGuardedLookup(policy, refuse);

  const connectWithLookup = buildConnector({ lookup: guardedLookup } as buildConnector.BuildOptions);
  const connect: buildConnector.connector = (options, callback) => {
    // net.connect skips `lookup` for IP literals, so those are checked here.
    const refusal = policy.checkLiteral(options.hostname);
    if (refusal) {
      callback(refuse(refusal), null);
      return;
    }
    connectWithLookup(options, callback);
  };

  return { agent: new Agent({ connect }), refusal: () => lastRefusal };
}
