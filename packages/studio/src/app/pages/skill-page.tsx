import { useState } from "preact/hooks";
import type { LiveEvent, SkillView } from "../api/api-types.js";
import { ErrorNotice } from "../components/error-notice.js";
import { JsonView } from "../components/json-view.js";
import { LoadErrorNotice } from "../components/load-error-notice.js";
import { formatDuration, formatTime } from "../format.js";
import { useApi } from "../hooks/use-api.js";
import { useCoalesced, useLiveEvent } from "../hooks/use-live-event.js";
import { usePageTitle } from "../hooks/use-page-title.js";
import { href, navigate, type Route } from "../router/hash-route.js";
import { RecentExecutions } from "../skills/recent-executions.js";
import { type FormFill, RunForm } from "../skills/run-form.js";
import { SkillSource } from "../skills/skill-source.js";
import { useStudio } from "../studio-context.js";
import "../skills/skills.css";

/** Versions are normalised by the server (no build metadata), so a `-` after the patch means a prerelease. */
const PRERELEASE = /^\d+\.\d+\.\d+-/;

/**
 * One skill: description, versions, facts, schemas, the manifest's examples, a run form generated
 * from its input schema, and its recent executions. `?version=` picks a version to show and run.
 */
export function SkillPage({ route, name }: { route: Route; name: string }) {
  usePageTitle(name);
  const { api, announce } = useStudio();
  const listing = useApi((signal) => api.skillVersions(name, signal), [name]);
  const relist = useCoalesced(listing.reload);
  useLiveEvent((event: LiveEvent) => {
    if (event.type === "activity" || event.type === "resync") relist();
  });
  const [fill, setFill] = useState<FormFill | undefined>(undefined);

  // Until the new skill's answer comes, the previous skill's listing is not this page's.
  const current = listing.data?.every((entry) => entry.name === name) === true ? listing.data : undefined;
  const versions = current ?? [];
  // The version a bare name runs, as the server picks it: the highest enabled release.
  const runnable = versions.find((skill) => skill.enabled && !PRERELEASE.test(skill.version)) ?? versions[0];
  const picked = route.query.get("version") ?? undefined;
  const skill = picked === undefined ? runnable : versions.find((entry) => entry.version === picked);

  if (current === undefined) {
    return (
      <section>
        <h1>{name}</h1>
        {listing.error === undefined ? (
          <p class="loading">Loading {name}…</p>
        ) : (
          <>
            <ErrorNotice error={listing.error} title={`Cannot show ${name}`} />
            <p>
              <a href={href(["skills"])}>Back to the skills</a>
            </p>
          </>
        )}
      </section>
    );
  }

  return (
    <section class="skill-page">
      <p class="breadcrumb">
        <a href={href(["skills"])}>Skills</a> /
      </p>
      <h1>{name}</h1>
      {listing.error === undefined ? null : <ErrorNotice error={listing.error} title="Cannot refresh" />}
      {versions.length > 1 || picked !== undefined ? (
        <div class="field skill-version-picker">
          <label for="skill-version">Version</label>
          <select
            id="skill-version"
            value={picked ?? ""}
            onChange={(event) => {
              const version = event.currentTarget.value;
              navigate(href(["skills", name], { version }), { replace: true });
            }}
          >
            <option value="">
              {runnable === undefined ? "latest" : `${runnable.version} (what “${name}” runs)`}
            </option>
            {versions.map((entry) => (
              <option key={entry.id} value={entry.version}>
                {entry.version}
                {entry.enabled ? "" : " (disabled)"}
              </option>
            ))}
          </select>
        </div>
      ) : null}
      {skill === undefined ? (
        <p class="notice notice-warning">
          {name} has no version {picked}. <a href={href(["skills", name])}>Show the version it runs</a>.
        </p>
      ) : (
        <SkillDetails
          key={skill.id}
          skill={skill}
          version={picked}
          fill={fill}
          onUseExample={(input) => {
            setFill((current) => ({ input, serial: (current?.serial ?? 0) + 1 }));
            announce("The example is in the run form");
          }}
        />
      )}
    </section>
  );
}

function SkillDetails({
  skill,
  version,
  fill,
  onUseExample,
}: {
  skill: SkillView;
  version: string | undefined;
  fill: FormFill | undefined;
  onUseExample: (input: unknown) => void;
}) {
  return (
    <>
      {skill.description === "" ? null : <p class="skill-description-lead">{skill.description}</p>}
      {skill.lastLoadError === null ? null : (
        <LoadErrorNotice error={skill.lastLoadError} servingVersion={skill.version} />
      )}
      {skill.enabled ? null : (
        <p class="notice notice-warning">
          Version {skill.version} is disabled: running it is refused until its owner enables it on the Skills
          page.
        </p>
      )}
      <dl class="facts skill-facts">
        <dt>Version</dt>
        <dd>{skill.version}</dd>
        <dt>Runtime</dt>
        <dd>{skill.runtime}</dd>
        <dt>Timeout</dt>
        <dd>{skill.timeoutMs === null ? "the server's default" : formatDuration(skill.timeoutMs)}</dd>
        <dt>Tags</dt>
        <dd>
          {skill.tags.length === 0
            ? "none"
            : skill.tags.map((tag) => (
                <span class="tag" key={tag}>
                  {tag}
                </span>
              ))}
        </dd>
        <dt>Source</dt>
        <dd>
          <SkillSource origin={skill.origin} />
        </dd>
        <dt>Owner</dt>
        <dd>{skill.owner}</dd>
        <dt>Updated</dt>
        <dd>{formatTime(skill.updatedAt)}</dd>
      </dl>
      <div class="skill-schemas">
        <JsonView value={skill.inputSchema} label="Input schema" />
        {skill.outputSchema === null ? (
          <p class="empty">No output schema: the output is not checked.</p>
        ) : (
          <JsonView value={skill.outputSchema} label="Output schema" />
        )}
      </div>
      {(skill.examples ?? []).length === 0 ? null : (
        <section aria-labelledby="skill-examples-title">
          <h2 id="skill-examples-title">Examples</h2>
          <ol class="skill-examples">
            {(skill.examples ?? []).map((example, index) => {
              const title = example.description ?? `Example ${index + 1}`;
              return (
                <li class="card" key={index} aria-label={title}>
                  <p class="skill-example-title">{title}</p>
                  <JsonView value={example.input} label="Input" />
                  {example.output === undefined ? null : <JsonView value={example.output} label="Output" />}
                  <button type="button" class="secondary" onClick={() => onUseExample(example.input)}>
                    Use this example
                  </button>
                </li>
              );
            })}
          </ol>
        </section>
      )}
      <RunForm skill={skill} version={version} fill={fill} />
      <RecentExecutions name={skill.name} />
    </>
  );
}
