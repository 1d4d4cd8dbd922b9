import { pathToFileURL } from "node:url";
import type { Skill } from "@skillbox/core";
import { testSkill } from "@skillbox/test-helpers/runtime-request";

export { GRANTED, handBuiltRequest } from "@skillbox/test-helpers/runtime-request";

/** A `runtime: "worker"` skill whose handler is the module at `file`, as the registry would hold it. */
export function workerSkill(name: string, file: string, fields: Partial<Skill> = {}): Skill {
  return testSkill(name, { handler: pathToFileURL(file).href, runtime: "worker", ...fields });
}
