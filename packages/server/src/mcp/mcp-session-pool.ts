/** Why an MCP session ended. */
export type McpSessionEndReason =
  /** The client sent DELETE (or the transport closed itself). */
  | "deleted"
  /** No request was open on it for `sessionIdleTimeoutMs`. */
  | "expired"
  /** It was its owner's least recently used idle session when a new one of that owner needed its room. */
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

/** Room held for one new session by {@link McpSessionPool.reserve}. */
export interface McpSessionReservation<Value> {
  /**
   * Turns the reservation into session `id`, first ending the owner's least recently used idle
   * session where a cap is reached — or, when every one of the owner's sessions is in use, keeps
   * nothing and answers which cap is full. Call it only once the request is known to be a valid
   * `initialize` (the SDK's `onsessioninitialized`), so a request that is not one never ends a session.
   */
  commit(id: string, value: Value): PooledSession<Value> | { full: "owner" | "total" };
  /** Gives the room back (idempotent; a committed reservation has nothing to give back). */
  release(): void;
}

/**
 * The MCP sessions of a handler, bounded: at most `maxSessionsPerOwner` per owner and
 * `maxSessions` in all, counting sessions whose `initialize` is still in flight, and each ended
 * once no request has been open on it for `sessionIdleTimeoutMs`. A session with an open request
 * — its client's event stream (GET) counts — is in use: it is never evicted nor expired.
 *
 * A new session only ever ends a session of its own owner (the least recently used idle one):
 * at the total cap, when the owner has no idle session, it is refused, so one owner opening
 * sessions cannot push other owners' sessions out. The per-owner cap is the main bound; the
 * total cap is the server's last line, and other owners' idle sessions free their room by expiry.
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
   * Holds room for one new session of `owner` while its `initialize` is in flight, ending nothing
   * yet ({@link McpSessionReservation.commit} does, once the request proved valid). Refused with
   * the cap that leaves no room when the owner's sessions in use plus its initializes in flight
   * fill it: only the owner's idle sessions can make room.
   */
  reserve(owner: string): McpSessionReservation<Value> | { full: "owner" | "total" } {
    const ownIdle = countIdle(this.byOwner.get(owner)?.values() ?? []);
    if (this.count(owner) - ownIdle >= this.limits.maxSessionsPerOwner) return { full: "owner" };
    if (this.count() - ownIdle >= this.limits.maxSessions) return { full: "total" };
    this.reserved.set(owner, (this.reserved.get(owner) ?? 0) + 1);
    this.reservedTotal++;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const left = (this.reserved.get(owner) ?? 1) - 1;
      if (left === 0) this.reserved.delete(owner);
      else this.reserved.set(owner, left);
      this.reservedTotal--;
    };
    return {
      commit: (id, value) => {
        // Room for this one among the established sessions; other initializes in flight make
        // their own room when (and if) they prove valid.
        const full = this.makeRoom(owner);
        release();
        return full === undefined ? this.add(id, owner, value) : { full };
      },
      release,
    };
  }

  /** Ends the owner's least recently used idle sessions until one more fits under both caps. */
  private makeRoom(owner: string): "owner" | "total" | undefined {
    const caps = [
      ["owner", () => this.byOwner.get(owner)?.size ?? 0, this.limits.maxSessionsPerOwner],
      ["total", () => this.sessions.size, this.limits.maxSessions],
    ] as const;
    for (const [cap, established, limit] of caps) {
      while (established() >= limit) {
        const idle = firstIdle(this.byOwner.get(owner)?.values() ?? []);
        if (idle === undefined) return cap;
        this.end(idle, "evicted");
      }
    }
    return undefined;
  }

  /** Adds a session whose `initialize` request is open. */
  private add(id: string, owner: string, value: Value): PooledSession<Value> {
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

function countIdle<Value>(sessions: Iterable<PooledSession<Value>>): number {
  let idle = 0;
  for (const session of sessions) if (session.openRequests === 0) idle++;
  return idle;
}

function firstIdle<Value>(sessions: Iterable<PooledSession<Value>>): PooledSession<Value> | undefined {
  for (const session of sessions) if (session.openRequests === 0) return session;
  return undefined;
}
