import { createContext } from "preact";
import { useContext } from "preact/hooks";
import type { ApiClient } from "./api/api-client.js";
import type { CallerView } from "./api/api-types.js";
import type { LiveEvents } from "./live/live-events.js";

/** What every view of the Studio shares: the API, the live stream and who the caller is. */
export interface Studio {
  api: ApiClient;
  live: LiveEvents;
  caller: CallerView;
  /** Says a short message to screen readers (and shows it briefly): "Execution started". */
  announce(message: string): void;
}

export const StudioContext = createContext<Studio | null>(null);

/** The {@link Studio} of the page; only views rendered inside the signed-in app may call it. */
export function useStudio(): Studio {
  const studio = useContext(StudioContext);
  if (studio === null) throw new Error("useStudio(): rendered outside <StudioContext.Provider>");
  return studio;
}
