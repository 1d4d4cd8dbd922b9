import type { SkillOrigin } from "../api/api-types.js";

const ORIGIN_LABELS: Record<SkillOrigin["kind"], string> = {
  folder: "Folder",
  npm: "npm package",
  api: "API",
};

/** Where a skill comes from: "Folder", "npm package `@acme/weather`", "API". */
export function SkillSource({ origin }: { origin: SkillOrigin }) {
  return (
    <>
      {ORIGIN_LABELS[origin.kind]}
      {origin.package === null ? null : (
        <>
          {" "}
          <code>{origin.package}</code>
        </>
      )}
    </>
  );
}
