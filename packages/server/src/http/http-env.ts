/** The Hono environment of the API routes: the authentication middleware sets who the caller is. */
export interface HttpEnv {
  Variables: {
    /** The owner id the caller acts as: the API key's owner, or `public` without keys. */
    owner: string;
    /**
     * Whether the caller may approve and reject its owner's executions: an `owner+approver` key,
     * or, without keys, a connection from this machine.
     */
    approver: boolean;
  };
}
