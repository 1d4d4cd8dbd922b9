import { useEffect, useState } from "preact/hooks";
import { useStudio } from "../studio-context.js";
import { type ActivitySnapshot, activityFeed } from "./activity-feed.js";

/**
 * The tab's activity feed, re-rendering on each change. It makes sure the feed follows the
 * Studio's live stream, and on purpose never stops it: leaving the page must not lose what
 * happens meanwhile (the app normally starts following at sign-in already).
 */
export function useActivityFeed(): ActivitySnapshot {
  const { live } = useStudio();
  const [snapshot, setSnapshot] = useState(activityFeed.snapshot);
  useEffect(() => {
    activityFeed.follow(live);
    setSnapshot(activityFeed.snapshot);
    return activityFeed.subscribe(setSnapshot);
  }, [live]);
  return snapshot;
}
