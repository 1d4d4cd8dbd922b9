/**
 * A TCP port free on 127.0.0.1 right now: the OS picks it for a listener that closes at once.
 * A server started on it soon after almost always gets it; the helpers that use it retry on a clash.
 */
export declare function freeLoopbackPort(): Promise<number>;
