import type { SkillLoader } from "@skillbox/loader";
import { displayPath } from "@skillbox/loader/internal";
import { createLoaderActivity, type LoaderActivityFeed } from "@skillbox/server";

/**
 * The loader's activity from now on (loads, reloads, removals, load errors, warnings) as the
 * source `GET /api/events` streams: one listener per loader event however many clients
 * listen, paths shown as the terminal shows them (relative to the working directory), and
 * the packages' owner (`owner`, default `system`) deciding which callers hear of them. A feed,
 * so the host can also report what happened before the server listened.
 */
export function loaderActivitySource(loader: SkillLoader, owner: string | undefined): LoaderActivityFeed {
  const activity = createLoaderActivity({ owner, displayPath });
  loader.on("loaded", (entry) => activity.loaded(entry));
  loader.on("reloaded", (entry) => activity.reloaded(entry));
  loader.on("removed", (entry) => activity.removed(entry));
  loader.on("error", (failure) => activity.failed(failure));
  loader.on("warning", (warning) => activity.warned(warning));
  return activity;
}
