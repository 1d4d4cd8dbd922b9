import type { Interceptor, Skill, SkillRegistration } from "@skillbox/core";
import { describe, expect, it } from "vitest";
import type { InterceptorPackage, SkillPackage } from "../../src/manifest/read-package.js";
import {
  HandlerSlot,
  type PackageState,
  type PreparedPackage,
  type PreparedSkill,
  type PreparedStandIn,
} from "../../src/package-state.js";
import { planReconcile, type ReconcileInput } from "../../src/reconcile/plan-reconcile.js";

// Plain values only: the plan is decided without a disk, a registry or an executor.

function skillPackage(root: string, name: string, version = "1.0.0"): SkillPackage {
  return {
    kind: "skill",
    root,
    manifestFile: `${root}/skill.json`,
    manifest: { name, version, handler: "./index.ts" },
    handlerPath: `${root}/index.ts`,
  };
}

function interceptorPackage(root: string, name: string): InterceptorPackage {
  return {
    kind: "interceptor",
    root,
    manifestFile: `${root}/interceptor.json`,
    manifest: { name, handler: "./index.ts" },
    handlerPath: `${root}/index.ts`,
  };
}

function registrationOf(name: string, version: string): SkillRegistration {
  return { name, version, handler: `file:///${name}`, input: {} };
}

function preparedSkill(root: string, name: string, version = "1.0.0"): PreparedSkill {
  return {
    kind: "skill",
    root,
    descriptor: skillPackage(root, name, version),
    registration: registrationOf(name, version),
    handler: undefined,
  };
}

function preparedInterceptor(root: string, name: string): PreparedPackage {
  return { kind: "interceptor", root, descriptor: interceptorPackage(root, name), interceptor: { name } };
}

function preparedStandIn(root: string, name: string): PreparedStandIn {
  return {
    kind: "stand-in",
    root,
    descriptor: interceptorPackage(root, name),
    interceptor: { name } satisfies Interceptor,
    failure: { root, file: `${root}/index.ts`, code: "HANDLER_INVALID", message: "does not import" },
  };
}

function registered(root: string, name: string, version = "1.0.0"): PackageState {
  return {
    kind: "skill",
    state: "registered",
    descriptor: skillPackage(root, name, version),
    registration: registrationOf(name, version),
    skill: { id: `id:${name}@${version}`, name, version } as Skill,
    handler: new HandlerSlot(),
  };
}

function activeInterceptor(root: string, name: string): PackageState {
  return {
    kind: "interceptor",
    state: "active",
    descriptor: interceptorPackage(root, name),
    interceptor: { name },
  };
}

function plan(input: Partial<ReconcileInput> & Pick<ReconcileInput, "prepared">) {
  return planReconcile({
    mode: "sync",
    known: new Map(),
    refused: new Map(),
    goneManifests: new Set(),
    rows: [],
    ...input,
  });
}

const rootsOf = (entries: { prepared: { root: string } }[]) => entries.map((entry) => entry.prepared.root);

describe("planReconcile", () => {
  it("registers new skills and activates new interceptors, announcing them on a sync only", () => {
    const prepared = [preparedSkill("/p/echo", "echo"), preparedInterceptor("/p/stamp", "stamp")];
    const synced = plan({ prepared });
    expect(rootsOf(synced.register)).toEqual(["/p/echo"]);
    expect(synced.register[0]).toMatchObject({ replaces: undefined, announce: "loaded" });
    expect(synced.activate).toMatchObject([{ prepared: { root: "/p/stamp" }, announce: "loaded" }]);
    const loaded = plan({ mode: "load", prepared });
    expect(loaded.register[0]?.announce).toBeUndefined();
    expect(loaded.activate[0]?.announce).toBeUndefined();
    expect(loaded.errors).toEqual([]);
  });

  it("announces `reloaded` for a known folder, and replaces the entry of its old version", () => {
    const result = plan({
      prepared: [preparedSkill("/p/echo", "echo", "1.1.0")],
      known: new Map([["/p/echo", registered("/p/echo", "echo", "1.0.0")]]),
    });
    expect(result.register).toMatchObject([{ replaces: "id:echo@1.0.0", announce: "reloaded" }]);
    expect(result.remove).toEqual([]);
  });

  it("refuses the second of two new folders offering one identity, by path order, naming the first", () => {
    const result = plan({
      mode: "load",
      prepared: [preparedSkill("/p/a-echo", "echo"), preparedSkill("/p/b-echo", "echo")],
    });
    expect(rootsOf(result.register)).toEqual(["/p/a-echo"]);
    expect(result.refuse).toEqual([["/p/b-echo", "echo@1.0.0"]]);
    expect(result.errors).toEqual([
      {
        root: "/p/b-echo",
        file: "/p/b-echo/skill.json",
        code: "MANIFEST_INVALID",
        message: expect.stringContaining("echo@1.0.0 is already provided by /p/a-echo"),
      },
    ]);
  });

  it("lets the folder already holding an identity keep it, on a full load as on a sync", () => {
    const known = new Map([["/p/b-echo", registered("/p/b-echo", "echo")]]);
    for (const mode of ["load", "sync"] as const) {
      const result = plan({
        mode,
        prepared: [preparedSkill("/p/a-echo", "echo"), preparedSkill("/p/b-echo", "echo")],
        known,
      });
      expect(rootsOf(result.register)).toEqual(["/p/b-echo"]);
      expect(result.refuse).toEqual([["/p/a-echo", "echo@1.0.0"]]);
    }
  });

  it("lets a new folder take over from a holder whose manifest is gone (a rename), forgetting it", () => {
    const result = plan({
      prepared: [preparedSkill("/p/echo-renamed", "echo")],
      known: new Map([["/p/echo", registered("/p/echo", "echo")]]),
      goneManifests: new Set(["/p/echo"]),
    });
    expect(rootsOf(result.register)).toEqual(["/p/echo-renamed"]);
    expect(result.forget).toEqual(["/p/echo"]);
    expect(result.errors).toEqual([]);
  });

  it("removes a folder that holds no package any more and promotes the folder refused for it", () => {
    const result = plan({
      prepared: [{ kind: "absent", root: "/p/a-stamp" }],
      known: new Map([["/p/a-stamp", activeInterceptor("/p/a-stamp", "stamp")]]),
      refused: new Map([["/p/b-stamp", 'interceptor "stamp"']]),
    });
    expect(result.remove).toMatchObject([
      { state: { descriptor: { root: "/p/a-stamp" } }, takenOver: false },
    ]);
    expect(result.promote).toEqual(["/p/b-stamp"]);
  });

  it("hands a removed folder's identity to the folder of the run that offers it now, without `removed`", () => {
    const result = plan({
      mode: "load",
      prepared: [{ kind: "absent", root: "/p/echo" }, preparedSkill("/p/echo-renamed", "echo")],
      known: new Map([["/p/echo", registered("/p/echo", "echo")]]),
    });
    expect(result.remove).toMatchObject([{ takenOver: true }]);
    expect(rootsOf(result.register)).toEqual(["/p/echo-renamed"]);
  });

  it("keeps the last good version of a folder that fails, and of one that cannot be told", () => {
    const failed = { root: "/p/echo", file: "/p/echo/skill.json", code: "MANIFEST_INVALID", message: "bad" };
    const result = plan({
      prepared: [
        { kind: "failed", root: "/p/echo", failure: failed },
        { kind: "kept", root: "/p/tools/one" },
      ],
      known: new Map([
        ["/p/echo", registered("/p/echo", "echo")],
        ["/p/tools/one", registered("/p/tools/one", "tools.one")],
      ]),
    });
    expect(result.errors).toEqual([failed]);
    expect(result.remove).toEqual([]);
    expect(result.register).toEqual([]);
  });

  it("keeps a working interceptor when its new version fails to load, reporting why", () => {
    const standIn = preparedStandIn("/p/stamp", "stamp");
    const result = plan({
      prepared: [standIn],
      known: new Map([["/p/stamp", activeInterceptor("/p/stamp", "stamp")]]),
    });
    expect(result.activate).toEqual([]);
    expect(result.errors).toEqual([standIn.failure]);
    // Never loaded: the stand-in goes in, refusing what the plugin would guard.
    const first = plan({ prepared: [standIn] });
    expect(first.activate).toMatchObject([{ prepared: { kind: "stand-in" }, announce: undefined }]);
  });

  it("drops the old kind when a skill folder turns into an interceptor folder", () => {
    const result = plan({
      prepared: [preparedInterceptor("/p/shape", "shape")],
      known: new Map([["/p/shape", registered("/p/shape", "shape")]]),
    });
    expect(result.remove).toMatchObject([{ state: { kind: "skill" }, takenOver: false }]);
    expect(result.activate).toMatchObject([{ prepared: { root: "/p/shape" }, replaces: undefined }]);
  });

  it("on a full load, unregisters rows of folders not found, except members of a bundle that failed to read", () => {
    const failed = {
      root: "/p/tools",
      file: "/p/tools/package.json",
      code: "MANIFEST_INVALID",
      message: "bad",
    };
    const result = plan({
      mode: "load",
      prepared: [
        preparedSkill("/p/echo", "echo", "2.0.0"),
        { kind: "failed", root: "/p/tools", failure: failed },
      ],
      rows: [
        { skillId: "id:gone", name: "gone", version: "1.0.0", root: "/p/gone", codeRoot: "/p/gone" },
        {
          skillId: "id:one",
          name: "tools.one",
          version: "1.0.0",
          root: "/p/tools/one",
          codeRoot: "/p/tools",
        },
        { skillId: "id:echo@1", name: "echo", version: "1.0.0", root: "/p/echo", codeRoot: "/p/echo" },
        { skillId: "id:echo@2", name: "echo", version: "2.0.0", root: "/p/echo", codeRoot: "/p/echo" },
      ],
    });
    expect(result.unregister).toEqual([
      {
        skillId: "id:gone",
        removed: { kind: "skill", name: "gone", version: "1.0.0", root: "/p/gone", skillId: "id:gone" },
      },
      // The folder now holds 2.0.0: its old version goes, as on a sync.
      { skillId: "id:echo@1", removed: undefined },
    ]);
  });
});
