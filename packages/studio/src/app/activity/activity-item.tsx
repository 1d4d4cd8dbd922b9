import type { LoaderActivity } from "../api/api-types.js";
import { formatTime } from "../format.js";
import { href } from "../router/hash-route.js";

/** The loader's event types, in the order the filters list them. */
export const ACTIVITY_TYPES = ["loaded", "reloaded", "removed", "load-error", "warning"] as const;

export type ActivityType = (typeof ACTIVITY_TYPES)[number];

/** How each type reads, with a symbol so it never rests on colour alone. */
export const ACTIVITY_LABELS: Record<ActivityType, { symbol: string; label: string; plural: string }> = {
  loaded: { symbol: "+", label: "loaded", plural: "Loaded" },
  reloaded: { symbol: "↻", label: "reloaded", plural: "Reloaded" },
  removed: { symbol: "−", label: "removed", plural: "Removed" },
  "load-error": { symbol: "✕", label: "load error", plural: "Load errors" },
  warning: { symbol: "⚠", label: "warning", plural: "Warnings" },
};

/** What the event is about, in words: a skill, an interceptor change, or a plugin file. */
function activityKind(activity: LoaderActivity): string {
  if (activity.type === "load-error" || activity.type === "warning") return "plugin";
  if (activity.package.kind === "skill") return "skill";
  // The active interceptors (and their order) changed: every execution is affected.
  return activity.type === "removed" ? "interceptor removed" : "interceptor change";
}

/** Every word the text filter can match: names, versions, files, messages, codes. */
export function activityText(activity: LoaderActivity): string {
  const words: string[] = [activity.type, ACTIVITY_LABELS[activity.type].label, activityKind(activity)];
  if (activity.type === "load-error") {
    const { root, file, code, message } = activity.failure;
    words.push(root, file, code, message);
  } else if (activity.type === "warning") {
    const { folder, code, message } = activity.warning;
    words.push(folder, code, message);
  } else {
    const { name, version, root, kind } = activity.package;
    words.push(`${name}@${version}`, root, kind);
  }
  return words.join(" ").toLowerCase();
}

/** One event of the feed: when, what, which package, and for failures the file and the message. */
export function ActivityItem({ activity }: { activity: LoaderActivity }) {
  const { symbol, label } = ACTIVITY_LABELS[activity.type];
  const kind = activityKind(activity);
  return (
    <li
      class={`activity-item activity-${activity.type}`}
      data-activity-type={activity.type}
      data-activity-kind={
        activity.type === "load-error" || activity.type === "warning" ? undefined : activity.package.kind
      }
    >
      <time dateTime={activity.at}>{formatTime(activity.at)}</time>
      <span class="activity-type">
        <span aria-hidden="true">{symbol}</span> {label}
      </span>
      <span class="tag">{kind}</span>
      <ActivityDetails activity={activity} />
    </li>
  );
}

function ActivityDetails({ activity }: { activity: LoaderActivity }) {
  if (activity.type === "load-error") {
    const { file, code, message } = activity.failure;
    return (
      <div class="activity-details">
        <p class="activity-headline">
          Failed to load <code>{file}</code>
        </p>
        <p class="activity-message">
          {message} <code class="error-code">{code}</code>
        </p>
        <p class="field-hint">The last good version, if any, keeps serving.</p>
      </div>
    );
  }
  if (activity.type === "warning") {
    const { folder, code, message } = activity.warning;
    return (
      <div class="activity-details">
        <p class="activity-headline">
          <code>{folder}</code>
        </p>
        <p class="activity-message">
          {message} <code class="error-code">{code}</code>
        </p>
      </div>
    );
  }
  const { name, version, root, kind } = activity.package;
  const title = `${name}@${version}`;
  return (
    <div class="activity-details">
      <p class="activity-headline">
        <strong>
          {kind === "skill" && activity.type !== "removed" ? (
            <a href={href(["skills", name])}>{title}</a>
          ) : (
            title
          )}
        </strong>{" "}
        <span class="field-hint">
          from <code>{root}</code>
        </span>
      </p>
    </div>
  );
}
