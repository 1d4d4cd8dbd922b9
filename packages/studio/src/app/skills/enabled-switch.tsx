import { useState } from "preact/hooks";
import { type ApiError, isApiError } from "../api/api-error.js";
import type { SkillView } from "../api/api-types.js";
import { ErrorNotice } from "../components/error-notice.js";
import { useStudio } from "../studio-context.js";

/**
 * A switch that enables or disables one skill version (`PATCH /api/skills/:id`). Only a skill's
 * owner may: the server's refusal (403, 404) is shown under it as the server words it.
 */
export function EnabledSwitch({
  skill,
  onChanged,
}: {
  skill: SkillView;
  onChanged: (skill: SkillView) => void;
}) {
  const { api, announce } = useStudio();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | undefined>(undefined);
  const id = `enabled-${skill.id}`;
  return (
    <div class="enabled-switch">
      <span class="switch-control">
        <input
          type="checkbox"
          role="switch"
          aria-checked={skill.enabled}
          id={id}
          checked={skill.enabled}
          disabled={busy}
          aria-describedby={error === undefined ? undefined : `${id}-error`}
          onChange={async (event) => {
            const wanted = event.currentTarget.checked;
            setBusy(true);
            setError(undefined);
            try {
              const updated = await api.setSkillEnabled(skill.id, wanted);
              onChanged(updated);
              announce(`${skill.name}@${skill.version} ${updated.enabled ? "enabled" : "disabled"}`);
            } catch (failure) {
              if (!isApiError(failure)) throw failure;
              setError(failure);
            } finally {
              setBusy(false);
            }
          }}
        />
        <label for={id}>
          <span class="visually-hidden">Enable {skill.name}</span>
          <span aria-hidden="true">{skill.enabled ? "On" : "Off"}</span>
        </label>
      </span>
      {error === undefined ? null : (
        <div id={`${id}-error`}>
          <ErrorNotice error={error} title="Not changed" />
        </div>
      )}
    </div>
  );
}
