import { useEffect, useState } from "preact/hooks";
import type { LiveEvent, SkillView } from "../api/api-types.js";
import { ErrorNotice } from "../components/error-notice.js";
import { LoadErrorNotice } from "../components/load-error-notice.js";
import { formatDuration, formatPercent } from "../format.js";
import { useApi } from "../hooks/use-api.js";
import { useCoalesced, useLiveEvent } from "../hooks/use-live-event.js";
import { usePageTitle } from "../hooks/use-page-title.js";
import { href, type Route } from "../router/hash-route.js";
import { EnabledSwitch } from "../skills/enabled-switch.js";
import { matchesSkillFilter } from "../skills/skill-filter.js";
import { SkillSource } from "../skills/skill-source.js";
import { useStudio } from "../studio-context.js";
import "../skills/skills.css";

/**
 * Every skill the caller can see (the version its bare name runs, with the others), its source,
 * runtime, switch, tags, the last load error of its package and its recent statistics. It lists
 * again on loader activity and finished executions, so a broken edit shows up (and clears) here.
 */
export function SkillsPage({ route }: { route: Route }) {
  usePageTitle("Skills");
  const { api } = useStudio();
  const [filter, setFilter] = useState(() => route.query.get("filter") ?? "");
  const listing = useApi((signal) => api.listSkills({ stats: true, signal }), []);
  // A switch's answer is shown at once; the next listing confirms it.
  const [changed, setChanged] = useState<ReadonlyMap<string, SkillView>>(new Map());
  useEffect(() => setChanged(new Map()), [listing.data]);
  const relist = useCoalesced(listing.reload);
  useLiveEvent((event: LiveEvent) => {
    if (event.type === "activity" || event.type === "finished" || event.type === "resync") relist();
  });

  const skills = (listing.data ?? [])
    .map((skill) => changed.get(skill.id) ?? skill)
    .sort((left, right) => left.name.localeCompare(right.name));
  const shown = skills.filter((skill) => matchesSkillFilter(skill, filter));

  return (
    <section class="skills-page">
      <h1>Skills</h1>
      <div class="toolbar">
        <div class="field">
          <label for="skills-filter">Filter skills</label>
          <input
            id="skills-filter"
            type="search"
            value={filter}
            placeholder="name, description or tag"
            aria-controls="skills-table"
            onInput={(event) => {
              const text = event.currentTarget.value;
              setFilter(text);
              // The filter is kept in the URL (a link to share, a way back) without a route
              // change: the page already shows it, and a route change would move the focus.
              history.replaceState(null, "", href(["skills"], { filter: text }));
            }}
          />
        </div>
        {listing.data === undefined ? null : (
          <p class="skills-count" aria-live="polite">
            {shown.length === skills.length
              ? `${skills.length} skill${skills.length === 1 ? "" : "s"}`
              : `${shown.length} of ${skills.length} skills`}
          </p>
        )}
      </div>
      {listing.error === undefined ? null : (
        <ErrorNotice error={listing.error} title="Cannot list the skills" />
      )}
      {listing.data === undefined ? (
        listing.loading ? (
          <p class="loading">Loading skills…</p>
        ) : null
      ) : skills.length === 0 ? (
        <p class="empty">
          No skills yet. Put a skill folder (a <code>skill.json</code> and its handler) in a watched folder
          such as <code>plugins/</code>: it shows up here as soon as it loads.
        </p>
      ) : (
        <table id="skills-table" aria-label="Skills" class="skills-table">
          <thead>
            <tr>
              <th scope="col">Skill</th>
              <th scope="col">Source</th>
              <th scope="col">Runtime</th>
              <th scope="col">Enabled</th>
              <th scope="col">Tags</th>
              <th scope="col" class="number">
                Success
              </th>
              <th scope="col" class="number">
                p50
              </th>
              <th scope="col" class="number">
                p95
              </th>
            </tr>
          </thead>
          <tbody>
            {shown.map((skill) => (
              <SkillRow
                key={skill.id}
                skill={skill}
                onChanged={(updated) =>
                  setChanged((current) =>
                    new Map(current).set(skill.id, { ...skill, enabled: updated.enabled }),
                  )
                }
              />
            ))}
          </tbody>
        </table>
      )}
      {listing.data !== undefined && skills.length > 0 && shown.length === 0 ? (
        <p class="empty">No skill matches “{filter}”.</p>
      ) : null}
    </section>
  );
}

function SkillRow({ skill, onChanged }: { skill: SkillView; onChanged: (skill: SkillView) => void }) {
  const others = (skill.versions ?? []).filter((version) => version !== skill.version);
  const stats = skill.stats;
  return (
    <tr data-skill={skill.name}>
      <td class="skill-cell">
        <a href={href(["skills", skill.name])} class="skill-name">
          {skill.name}
        </a>{" "}
        <span class="skill-version">{skill.version}</span>
        {others.length === 0 ? null : <span class="skill-other-versions"> · also {others.join(", ")}</span>}
        {skill.description === "" ? null : <p class="skill-description">{skill.description}</p>}
        {skill.lastLoadError === null ? null : (
          <LoadErrorNotice
            error={skill.lastLoadError}
            servingVersion={skill.version}
            class="skill-load-error"
          />
        )}
      </td>
      <td>
        <SkillSource origin={skill.origin} />
      </td>
      <td>{skill.runtime}</td>
      <td>
        <EnabledSwitch skill={skill} onChanged={onChanged} />
      </td>
      <td>
        {skill.tags.length === 0 ? (
          <span class="empty">—</span>
        ) : (
          skill.tags.map((tag) => (
            <span class="tag" key={tag}>
              {tag}
            </span>
          ))
        )}
      </td>
      <td
        class="number"
        title={stats ? `${stats.finished} finished of ${stats.executions} recent executions` : undefined}
      >
        {formatPercent(stats?.successRate)}
      </td>
      <td class="number">{formatDuration(stats?.p50DurationMs)}</td>
      <td class="number">{formatDuration(stats?.p95DurationMs)}</td>
    </tr>
  );
}
