/** The Hono environment of the API routes: the authentication middleware sets the caller's owner id. */
export interface HttpEnv {
  Variables: {
    /** The owner id the caller acts as: the API key's owner, or `public` without keys. */
    owner: string;
  };
}
