import type { LoadReport, SkillLoader } from "@skillbox/loader";
import { displayPath } from "@skillbox/loader/internal";
import { createLoaderActivity, type LoaderActivityFeed } from "@skillbox/server";

/** Options of {@link loaderActivitySource}. */
export interface LoaderActivitySourceOptions {
  /** The owner of the loader's packages (default `system`: every caller hears of them). */
  owner: string | undefined;
  /** The first load, reported to the feed first when it opens. */
  firstLoad: Pick<LoadReport, "loaded" | "failed">;
}

/** A loader's activity feed that holds what happens until the server is ready for it. */
export interface HeldLoaderActivity {
  /** The source `GET /api/events` and the API's views read. */
  feed: LoaderActivityFeed;
  /**
   * Publishes the first load, then everything the loader did since (in order), and from then on
   * each activity as it happens. Call it once the app subscribed (after `startApiServer`).
   */
  open(): void;
}

/** Activities held before `open()` at most (an edit storm while sandboxes warm): the oldest go first. */
const MAX_HELD = 10_000;

/**
 * The loader's activity (loads, reloads, removals, load errors, warnings) as the source
 * `GET /api/events` streams: one listener per loader event however many clients listen, paths
 * shown as the terminal shows them (relative to the working directory), the packages' owner
 * deciding which callers hear of them.
 *
 * Created as soon as the folders loaded, before sandboxes warm and the server listens: an edit
 * in that window (a handler broken while containers start) is held, not lost, and comes after
 * the first load when the feed opens — so the API's views never show a broken package as fine.
 */
export function loaderActivitySource(
  loader: SkillLoader,
  options: LoaderActivitySourceOptions,
): HeldLoaderActivity {
  const feed = createLoaderActivity({ owner: options.owner, displayPath });
  let held: Array<() => void> | undefined = [
    ...options.firstLoad.loaded.map((entry) => () => feed.loaded(entry)),
    ...options.firstLoad.failed.map((failure) => () => feed.failed(failure)),
  ];
  const deliver = (publish: () => void) => {
    if (held === undefined) return publish();
    held.push(publish);
    if (held.length > MAX_HELD) held.shift();
  };
  loader.on("loaded", (entry) => deliver(() => feed.loaded(entry)));
  loader.on("reloaded", (entry) => deliver(() => feed.reloaded(entry)));
  loader.on("removed", (entry) => deliver(() => feed.removed(entry)));
  loader.on("error", (failure) => deliver(() => feed.failed(failure)));
  loader.on("warning", (warning) => deliver(() => feed.warned(warning)));
  return {
    feed,
    open() {
      const queue = held ?? [];
      held = undefined;
      for (const publish of queue) publish();
    },
  };
}
