import type { ServerCallContext, User } from "@a2a-js/sdk/server";

/**
 * The caller as the A2A SDK sees it. The SDK scopes its task store, event buses and write locks
 * by `userName`, so using the Skillbox owner id there keeps one owner's tasks invisible to
 * another (`tasks/get` of someone else's task answers "task not found").
 */
export class OwnerUser implements User {
  constructor(
    /** The owner id (`apiKeyId`) the caller acts as. */
    readonly userName: string,
    /** True when the owner came from an API key, false for the anonymous `public` caller. */
    readonly isAuthenticated: boolean,
  ) {}
}

/**
 * The owner id a request acts as: the SDK user's `userName`, or `public` when it has none (the
 * SDK's unauthenticated user).
 */
export function ownerOfContext(context: ServerCallContext | undefined): string {
  return context?.user?.userName || "public";
}
