import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Skill } from "@skillbox/core";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { planHandlerSandbox } from "../src/handler-sandbox-plan.js";

describe("planHandlerSandbox", () => {
  let folder: string;
  let skill: Skill;

  beforeEach(() => {
    folder = realpathSync(mkdtempSync(join(tmpdir(), "skillbox-plan-")));
    writeFileSync(join(folder, "index.mjs"), "export default () => 1;\n");
    skill = {
      id: "id",
      name: "planned",
      version: "1.0.0",
      handler: pathToFileURL(join(folder, "index.mjs")).href,
      code: { modulePath: join(folder, "index.mjs"), codeHash: "hash", root: folder },
    } as unknown as Skill;
  });

  afterEach(() => rmSync(folder, { recursive: true, force: true }));

  it("mounts the skill at /skill and the runner under /opt/skillbox in an image", () => {
    const plan = planHandlerSandbox(skill, true);

    expect(plan.command).toEqual(["node", "/opt/skillbox/runner/container-runner.mjs", "/skill/index.mjs"]);
    expect(plan.mounts.map((mount) => mount.target)).toEqual([
      "/opt/skillbox/runner",
      "/opt/skillbox/node_modules/@skillbox/core",
      "/opt/skillbox/node_modules/jiti",
      "/opt/skillbox/node_modules/zod",
      "/opt/skillbox/node_modules/ipaddr.js",
      "/opt/skillbox/node_modules/@opentelemetry/api",
      "/skill",
    ]);
    expect(plan.mounts.at(-1)?.source).toBe(folder);
    expect(plan.mounts.every((mount) => mount.readOnly !== false)).toBe(true);
  });

  // Regression: under bwrap the runner was run from its host path, which a fresh /tmp hides
  // when the checkout itself lives under /tmp (as a CI clone may).
  it("mounts everything under the sandbox's own /tmp without an image (bwrap), never at a host path", () => {
    const plan = planHandlerSandbox(skill, false);

    expect(plan.command).toEqual([
      process.execPath,
      "/tmp/.skillbox/runner/container-runner.mjs",
      "/tmp/.skillbox/skill/index.mjs",
    ]);
    expect(plan.mounts.every((mount) => mount.target.startsWith("/tmp/.skillbox/"))).toBe(true);
  });

  it("mounts a bundle member's code root, not its own folder, and runs the module inside it", () => {
    const member = join(folder, "members", "planned");
    mkdirSync(member, { recursive: true });
    writeFileSync(join(member, "index.mjs"), "export default () => 1;\n");
    const memberSkill = {
      ...skill,
      handler: pathToFileURL(join(member, "index.mjs")).href,
      code: { modulePath: join(member, "index.mjs"), codeHash: "hash", root: folder },
    } as Skill;

    const plan = planHandlerSandbox(memberSkill, true);

    expect(plan.mounts.at(-1)).toMatchObject({ source: folder, target: "/skill" });
    expect(plan.command.at(-1)).toBe("/skill/members/planned/index.mjs");
    expect(plan.env.SKILLBOX_SKILL_SOURCE).toBe(folder);
  });

  it("mounts the module's own folder for a skill registered without code", () => {
    const { code: _code, ...withoutCode } = skill;

    const plan = planHandlerSandbox(withoutCode as Skill, true);

    expect(plan.mounts.at(-1)?.source).toBe(folder);
    expect(plan.command.at(-1)).toBe("/skill/index.mjs");
  });
});
