/** Why an MCP session ended. */
export type McpSessionEndReason =
  /** The client sent DELETE (or the transport closed itself). */
  | "deleted"
  /** No request was open on it for `sessionIdleTimeoutMs`. */
  | "expired"
  /** It was the least recently used idle session when a new one needed its room. */
  | "evicted"
  /** The handler closed. */
  | "closed";

/** What `onSessionEnd` hears. */
export interface McpSessionEnd {
  sessionId: string;
  owner: string;
  reason: McpSessionEndReason;
}

/** The bounds of a {@link McpSessionPool}. */
export interface McpSessionLimits {
  maxSessionsPerOwner: number;
  maxSessions: number;
  sessionIdleTimeoutMs: number;
}

/** One session of the pool. */
export interface PooledSession<Value> {
  readonly id: string;
  readonly owner: string;
  readonly value: Value;
  /** Requests whose response (an SSE stream included) is still open. */
  openRequests: number;
  idleTimer: NodeJS.Timeout | undefined;
}

/**
 * The MCP sessions of a handler, bounded: at most `maxSessionsPerOwner` per owner and
 * `maxSessions` in all, counting sessions whose `initialize` is still in flight, and each ended
 * once no request has been open on it for `sessionIdleTimeoutMs`. A session with an open request
 * — its client's event stream (GET) counts — is in use: it is never evicted nor expired.
 *
 * Both maps are in order of last use (a use moves a session to the end), so the least recently
 * used idle session is the first idle one found.
 */
export class McpSessionPool<Value> {
  private readonly sessions = new Map<string, PooledSession<Value>>();
  private readonly byOwner = new Map<string, Map<string, PooledSession<Value>>>();
  /** Owner → `initialize` requests in flight, which hold their room until they settle. */
  private readonly reserved = new Map<string, number>();
  private reservedTotal = 0;

  constructor(
    private readonly limits: McpSessionLimits,
    private readonly ended: (session: PooledSession<Value>, reason: McpSessionEndReason) => void,
  ) {}

  /** Sessions open (and being opened) for `owner`, or in all. */
  count(owner?: string): number {
    if (owner === undefined) return this.sessions.size + this.reservedTotal;
    return (this.byOwner.get(owner)?.size ?? 0) + (this.reserved.get(owner) ?? 0);
  }

  get(id: string): PooledSession<Value> | undefined {
    return this.sessions.get(id);
  }

  /**
   * Holds room for one new session of `owner`, ending the least recently used idle session (the
   * owner's own for the owner cap, anyone's for the total cap) where the cap is reached. Returns
   * a release function, or which cap leaves no room when every session under it is in use.
   */
  reserve(owner: string): { release: () => void } | { full: "owner" | "total" } {
    if (this.count(owner) >= this.limits.maxSessionsPerOwner) {
      const idle = firstIdle(this.byOwner.get(owner)?.values() ?? []);
      if (idle === undefined) return { full: "owner" };
      this.end(idle, "evicted");
    }
    if (this.count() >= this.limits.maxSessions) {
      const idle = firstIdle(this.sessions.values());
      if (idle === undefined) return { full: "total" };
      this.end(idle, "evicted");
    }
    this.reserved.set(owner, (this.reserved.get(owner) ?? 0) + 1);
    this.reservedTotal++;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        const left = (this.reserved.get(owner) ?? 1) - 1;
        if (left === 0) this.reserved.delete(owner);
        else this.reserved.set(owner, left);
        this.reservedTotal--;
      },
    };
  }

  /** Adds a session whose `initialize` request is open (release its reservation after). */
  add(id: string, owner: string, value: Value): PooledSession<Value> {
    const session: PooledSession<Value> = { id, owner, value, openRequests: 1, idleTimer: undefined };
    this.sessions.set(id, session);
    let owned = this.byOwner.get(owner);
    if (owned === undefined) {
      owned = new Map();
      this.byOwner.set(owner, owned);
    }
    owned.set(id, session);
    return session;
  }

  /** A request on `session` opened: it is in use and the most recently used. */
  begin(session: PooledSession<Value>): void {
    if (!this.sessions.has(session.id)) return;
    session.openRequests++;
    clearTimeout(session.idleTimer);
    session.idleTimer = undefined;
    this.sessions.delete(session.id);
    this.sessions.set(session.id, session);
    const owned = this.byOwner.get(session.owner);
    owned?.delete(session.id);
    owned?.set(session.id, session);
  }

  /** A request on `session` ended (its response body included); the last one starts the idle clock. */
  finish(session: PooledSession<Value>): void {
    session.openRequests = Math.max(0, session.openRequests - 1);
    if (session.openRequests > 0 || !this.sessions.has(session.id)) return;
    clearTimeout(session.idleTimer);
    session.idleTimer = setTimeout(() => this.end(session, "expired"), this.limits.sessionIdleTimeoutMs);
    // An idle session must not keep the process alive.
    session.idleTimer.unref();
  }

  /** Forgets `session` and reports why (once; later calls do nothing). */
  end(session: PooledSession<Value>, reason: McpSessionEndReason): void {
    if (this.sessions.get(session.id) !== session) return;
    clearTimeout(session.idleTimer);
    session.idleTimer = undefined;
    this.sessions.delete(session.id);
    const owned = this.byOwner.get(session.owner);
    owned?.delete(session.id);
    if (owned?.size === 0) this.byOwner.delete(session.owner);
    this.ended(session, reason);
  }

  /** Ends every session. */
  endAll(reason: McpSessionEndReason): void {
    for (const session of [...this.sessions.values()]) this.end(session, reason);
  }
}

function firstIdle<Value>(sessions: Iterable<PooledSession<Value>>): PooledSession<Value> | undefined {
  for (const session of sessions) if (session.openRequests === 0) return session;
  return undefined;
}
