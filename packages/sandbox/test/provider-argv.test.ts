import { randomUUID } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SkillboxError } from "@skillbox/core";
import {
  createAppleContainerProvider,
  createBwrapProvider,
  createDockerProvider,
  createOrbstackProvider,
  createPodmanProvider,
  createWslcProvider,
  resolveProvider,
  resolveSandboxConfig,
  SANDBOX_LABEL,
  SANDBOX_OWNER_LABEL,
  type SandboxConfig,
  type SandboxProvider,
  type SandboxSpec,
  type SpawnPlan,
} from "@skillbox/sandbox";
import { currentSandboxOwner, formatSandboxOwner } from "@skillbox/sandbox/internal";
import { describeWithEngine, podmanRequirement } from "@skillbox/test-helpers/engine-availability";
import { afterEach, describe, expect, it } from "vitest";
import { OutputCapture } from "../src/output-capture.js";
import { appleContainerRunArgs } from "../src/providers/apple-container-provider.js";
import { bwrapArgs } from "../src/providers/bwrap-provider.js";

const SECRET_VALUE = '{"apiKey":"do-not-show-in-ps"}';

/** A spec as the runner builds it, with a secret-bearing variable and a CLI variable (PATH). */
function spec(config: SandboxConfig = {}): SandboxSpec {
  return {
    id: `skillbox-test-${randomUUID()}`,
    image: "localhost/skillbox-node:test",
    command: ["node", "-e", "0"],
    env: { INPUT_DATA: SECRET_VALUE, PATH: "/sandbox/bin:/usr/bin" },
    config: resolveSandboxConfig(config),
  };
}

// Planning a CLI that takes a file (wslc, Apple's) writes the sandbox's env file; the runner deletes it when the
// sandbox ends, and these tests, which start no sandbox, delete theirs here.
afterEach(() => {
  for (const file of readdirSync(tmpdir())) {
    if (file.startsWith("skillbox-test-") && file.endsWith(".env")) rmSync(join(tmpdir(), file));
  }
});

/** The value that follows each occurrence of `flag`. */
function valuesOf(args: string[], flag: string): string[] {
  return args.flatMap((arg, index) => (arg === flag ? [args[index + 1] ?? ""] : []));
}

/** Whether `sequence` appears in `args` as consecutive elements. */
function containsSequence(args: string[], ...sequence: string[]): boolean {
  return args.some((_, start) => sequence.every((item, offset) => args[start + offset] === item));
}

/**
 * The CLI's own arguments: a plan that streams the env file on descriptor 3 runs the CLI
 * through a shell that turns the descriptor into a pipe (`sh -c … skillbox-sandbox <cli> …`).
 */
function cliOf(plan: SpawnPlan): { file: string; args: string[] } {
  if (plan.file !== "/bin/sh") return plan;
  const [file = "", ...args] = plan.args.slice(plan.args.indexOf("skillbox-sandbox") + 1);
  return { file, args };
}

/** The env file the CLI reads: streamed on descriptor 3, or a private temporary file. */
function environmentFileOf(plan: SpawnPlan): string {
  const [path = ""] = valuesOf(cliOf(plan).args, "--env-file");
  if (path === "/dev/fd/3") return plan.descriptor3 ?? "";
  return readFileSync(path, "utf8");
}

/** The arguments before the image: the flags of `run`. */
function runFlags(args: string[], image: string): string[] {
  const index = args.indexOf(image);
  expect(index).toBeGreaterThan(0);
  return args.slice(0, index);
}

const dockerCompatible: Array<{
  name: string;
  binary: string;
  prefix: string[];
  via: "descriptor" | "file";
  provider: () => SandboxProvider;
}> = [
  { name: "podman", binary: "podman", prefix: [], via: "descriptor", provider: () => createPodmanProvider() },
  { name: "docker", binary: "docker", prefix: [], via: "descriptor", provider: () => createDockerProvider() },
  {
    name: "orbstack",
    binary: "docker",
    prefix: ["--context", "orbstack"],
    via: "descriptor",
    provider: () => createOrbstackProvider(),
  },
  { name: "wslc", binary: "wslc", prefix: [], via: "file", provider: () => createWslcProvider() },
];

describe.each(dockerCompatible)("the $name provider's plan", ({ binary, prefix, via, provider }) => {
  it("runs the CLI in the foreground with the hardened defaults", () => {
    const given = spec();
    const plan = cliOf(provider().plan(given));
    const flags = runFlags(plan.args, given.image);

    expect(plan.file).toBe(binary);
    expect(plan.args.slice(0, prefix.length + 4)).toEqual([...prefix, "run", "--rm", "-i", "--name"]);
    expect(valuesOf(flags, "--name")).toEqual([given.id]);
    expect(valuesOf(flags, "--label")).toEqual([
      `${SANDBOX_LABEL}=${process.pid}`,
      `${SANDBOX_OWNER_LABEL}=${formatSandboxOwner(currentSandboxOwner())}`,
    ]);
    expect(valuesOf(flags, "--cap-drop")).toEqual(["all"]);
    expect(valuesOf(flags, "--security-opt")).toEqual(["no-new-privileges"]);
    expect(valuesOf(flags, "--network")).toEqual(["none"]);
    expect(flags).toContain("--read-only");
    expect(valuesOf(flags, "--pids-limit")).toEqual(["128"]);
    expect(valuesOf(flags, "--user")).toEqual(["65534:65534"]);
    expect(valuesOf(flags, "--tmpfs")).toEqual([
      "/tmp:rw,size=64m,mode=1777",
      "/workspace:rw,size=64m,mode=1777",
    ]);
    expect(valuesOf(flags, "--workdir")).toEqual(["/workspace"]);
    expect(valuesOf(flags, "--pull")).toEqual(["never"]);
    // No limit unless configured.
    expect(flags).not.toContain("--memory");
    expect(flags).not.toContain("--cpus");
    expect(plan.args.slice(flags.length)).toEqual([given.image, ...given.command]);
  });

  it("maps memoryMb to equal --memory and --memory-swap, and cpus and pidsLimit to their flags", () => {
    const given = spec({ memoryMb: 256, cpus: 0.5, pidsLimit: 32, tmpfsSizeMb: 16, workDir: "/job" });
    const flags = runFlags(provider().plan(given).args, given.image);

    expect(valuesOf(flags, "--memory")).toEqual(["256m"]);
    expect(valuesOf(flags, "--memory-swap")).toEqual(["256m"]);
    expect(valuesOf(flags, "--cpus")).toEqual(["0.5"]);
    expect(valuesOf(flags, "--pids-limit")).toEqual(["32"]);
    expect(valuesOf(flags, "--tmpfs")).toEqual(["/tmp:rw,size=16m,mode=1777", "/job:rw,size=16m,mode=1777"]);
    expect(valuesOf(flags, "--workdir")).toEqual(["/job"]);
  });

  it("drops --network none only with network: true and --read-only only with readOnly: false", () => {
    const given = spec({ network: true, readOnly: false });
    const flags = runFlags(provider().plan(given).args, given.image);

    expect(flags).not.toContain("--network");
    expect(flags).not.toContain("--read-only");
    // The rest of the hardening stays.
    expect(valuesOf(flags, "--cap-drop")).toEqual(["all"]);
    expect(valuesOf(flags, "--user")).toEqual(["65534:65534"]);
  });

  it("passes env values in an env file, never in argv or the CLI's own environment", async () => {
    const given = spec();
    const engine = provider();
    const plan = engine.plan(given);
    const [file = ""] = valuesOf(cliOf(plan).args, "--env-file");

    expect(environmentFileOf(plan)).toBe(`INPUT_DATA=${SECRET_VALUE}\nPATH=/sandbox/bin:/usr/bin\n`);
    if (via === "descriptor") {
      // Streamed on descriptor 3: nothing on disk that a killed host could leave behind.
      expect(file).toBe("/dev/fd/3");
      expect(readdirSync(tmpdir()).filter((name) => name.includes(given.id))).toEqual([]);
    } else {
      expect(statSync(file).mode & 0o777).toBe(0o600);
    }
    expect(plan.args.join(" ")).not.toContain(SECRET_VALUE);
    expect(plan.env).not.toHaveProperty("INPUT_DATA");
    // The CLI keeps its own PATH to find its helpers.
    expect(plan.env.PATH).toBe(process.env.PATH);
    await engine.finish?.(given, 0);
    if (via === "file") expect(existsSync(file)).toBe(false);
  });

  it("passes a multi-line value by name through the CLI's environment", () => {
    const plan = provider().plan({ ...spec(), env: { CERTIFICATE: "line one\nline two" } });

    expect(valuesOf(cliOf(plan).args, "--env")).toEqual(["CERTIFICATE"]);
    expect(plan.env.CERTIFICATE).toBe("line one\nline two");
  });

  it.each(["PATH", "LD_PRELOAD", "DOCKER_HOST", "GODEBUG", "HTTPS_PROXY"])(
    "refuses a multi-line %s, which would become the CLI's own variable, with SANDBOX_CONFIG_INVALID naming it",
    (name) => {
      let refusal: unknown;
      try {
        provider().plan({ ...spec(), env: { [name]: "/tmp/planted.so x\nsecond line" } });
      } catch (error) {
        refusal = error;
      }
      expect(refusal).toBeInstanceOf(SkillboxError);
      expect(refusal).toMatchObject({
        code: "SANDBOX_CONFIG_INVALID",
        message: expect.stringContaining(`\`${name}\``),
        data: { variable: name },
      });
    },
  );

  it.each([" victim", "\n+victim", "\t-victim", "$(victim)", "--all"])(
    "refuses to watch a sandbox id with %j, which could name other containers to the watchdog",
    async (tail) => {
      // An id that is a flag (`--all`) would make the watchdog's `rm` remove every container.
      const id = tail.startsWith("--") ? tail : `skillbox-test-${randomUUID()}${tail}`;
      const given = { ...spec(), id };
      const engine = provider();
      if (engine.prepare === undefined) return;
      await expect(engine.prepare(given)).rejects.toMatchObject({
        code: "SANDBOX_CONFIG_INVALID",
        message: expect.stringContaining(JSON.stringify(given.id)),
      });
    },
  );

  it("passes inheritEnv variables with the host's value", () => {
    process.env.SKILLBOX_TEST_INHERITED = "from the host";
    try {
      const plan = provider().plan(spec({ inheritEnv: ["SKILLBOX_TEST_INHERITED", "SKILLBOX_TEST_UNSET"] }));
      const contents = environmentFileOf(plan);
      expect(contents).toContain("SKILLBOX_TEST_INHERITED=from the host\n");
      expect(contents).not.toContain("SKILLBOX_TEST_UNSET");
    } finally {
      delete process.env.SKILLBOX_TEST_INHERITED;
    }
  });

  it("keeps the host's other variables out of the CLI's environment", () => {
    process.env.SKILLBOX_TEST_HOST_SECRET = "host-only";
    try {
      expect(provider().plan(spec()).env).not.toHaveProperty("SKILLBOX_TEST_HOST_SECRET");
    } finally {
      delete process.env.SKILLBOX_TEST_HOST_SECRET;
    }
  });

  it("bind-mounts host folders read-only unless told otherwise", () => {
    const given = spec({
      mounts: [
        { source: "/srv/skill", target: "/skill" },
        { source: "/srv/out", target: "/out", readOnly: false },
      ],
    });
    const flags = runFlags(provider().plan(given).args, given.image);
    expect(valuesOf(flags, "--mount")).toEqual([
      "type=bind,source=/srv/skill,target=/skill,readonly",
      "type=bind,source=/srv/out,target=/out",
    ]);
  });
});

describe("createPodmanProvider", () => {
  it("places runArgs and clientEnv where the CLI reads them", () => {
    const given = spec();
    const plan = createPodmanProvider({
      runArgs: ["--runtime", "runc"],
      clientEnv: { CONTAINER_HOST: "unix:///run/podman/podman.sock" },
    }).plan(given);
    const flags = runFlags(plan.args, given.image);

    expect(containsSequence(flags, "--runtime", "runc")).toBe(true);
    expect(plan.env.CONTAINER_HOST).toBe("unix:///run/podman/podman.sock");
  });
});

describe("appleContainerRunArgs", () => {
  it("maps the hardening to the container CLI's flags", () => {
    const args = appleContainerRunArgs(spec({ memoryMb: 256, cpus: 0.5, pidsLimit: 32 }), "/workspace");

    expect(args.slice(0, 3)).toEqual(["run", "--rm", "--interactive"]);
    expect(valuesOf(args, "--cap-drop")).toEqual(["ALL"]);
    expect(valuesOf(args, "--network")).toEqual(["none"]);
    expect(args).toContain("--no-dns");
    expect(valuesOf(args, "--memory")).toEqual(["256M"]);
    // Whole CPUs only: a fractional share is rounded up, never down to zero.
    expect(valuesOf(args, "--cpus")).toEqual(["1"]);
    expect(valuesOf(args, "--ulimit")).toEqual(["nproc=32:32"]);
    expect(valuesOf(args, "--user")).toEqual(["65534:65534"]);
    expect(valuesOf(args, "--tmpfs")).toEqual(["/tmp", "/workspace"]);
    expect(valuesOf(args, "--workdir")).toEqual(["/workspace"]);
    // The CLI has no such flags; the VM boundary stands in for them.
    for (const flag of ["--read-only", "--pids-limit", "--memory-swap", "--security-opt"]) {
      expect(args).not.toContain(flag);
    }
  });

  it("rounds 1.5 cpus up to 2 and leaves the network on with network: true", () => {
    const args = appleContainerRunArgs(spec({ cpus: 1.5, network: true }), "/workspace");
    expect(valuesOf(args, "--cpus")).toEqual(["2"]);
    expect(args).not.toContain("--network");
    expect(args).not.toContain("--no-dns");
  });

  it("plans the container CLI with env values in an env file", () => {
    const given = spec();
    const plan = createAppleContainerProvider().plan(given);

    expect(plan.file).toBe("container");
    expect(readFileSync(valuesOf(plan.args, "--env-file")[0] ?? "", "utf8")).toContain(
      `INPUT_DATA=${SECRET_VALUE}`,
    );
    expect(plan.args.join(" ")).not.toContain(SECRET_VALUE);
    expect(plan.env).not.toHaveProperty("INPUT_DATA");
    expect(plan.args.slice(-given.command.length - 1)).toEqual([given.image, ...given.command]);
  });
});

describe("bwrapArgs", () => {
  it("unshares everything, binds the root read-only and drops privileges", () => {
    const args = bwrapArgs(spec(), "/tmp/workspace");

    for (const flag of [
      "--die-with-parent",
      "--new-session",
      "--unshare-all",
      "--unshare-user",
      "--disable-userns",
    ]) {
      expect(args).toContain(flag);
    }
    expect(args).not.toContain("--share-net");
    expect(containsSequence(args, "--ro-bind", "/", "/")).toBe(true);
    expect(containsSequence(args, "--size", String(64 * 1024 * 1024), "--tmpfs", "/tmp")).toBe(true);
    expect(valuesOf(args, "--dir")).toEqual(["/tmp/workspace"]);
    expect(valuesOf(args, "--cap-drop")).toEqual(["ALL"]);
    expect(valuesOf(args, "--uid")).toEqual(["65534"]);
    expect(valuesOf(args, "--gid")).toEqual(["65534"]);
    expect(valuesOf(args, "--chdir")).toEqual(["/tmp/workspace"]);
  });

  it("shares the network only with network: true", () => {
    expect(bwrapArgs(spec({ network: true }), "/tmp/workspace")).toContain("--share-net");
  });

  it("uses the configured user and a tmpfs for a work dir outside /tmp", () => {
    const args = bwrapArgs(spec({ user: "1000:1001", tmpfsSizeMb: 8 }), "/job");
    expect(valuesOf(args, "--uid")).toEqual(["1000"]);
    expect(valuesOf(args, "--gid")).toEqual(["1001"]);
    expect(containsSequence(args, "--size", String(8 * 1024 * 1024), "--tmpfs", "/job")).toBe(true);
    expect(args).not.toContain("--dir");
  });

  it("binds mounts read-only unless told otherwise", () => {
    const args = bwrapArgs(
      spec({
        mounts: [
          { source: "/srv/skill", target: "/skill" },
          { source: "/srv/out", target: "/out", readOnly: false },
        ],
      }),
      "/tmp/workspace",
    );
    expect(containsSequence(args, "--ro-bind", "/srv/skill", "/skill")).toBe(true);
    expect(containsSequence(args, "--bind", "/srv/out", "/out")).toBe(true);
  });

  it("plans bwrap with the env on descriptor 3, never in argv or the host-side environment", () => {
    const given = spec();
    // Without prepare() there is no cgroup, so bwrap itself is the process.
    const plan = createBwrapProvider().plan(given);

    expect(plan.file).toBe("bwrap");
    expect(containsSequence(plan.args, "--args", "3")).toBe(true);
    expect(plan.args.join(" ")).not.toContain(SECRET_VALUE);
    expect(plan.env).toEqual({ PATH: process.env.PATH });
    expect(plan.descriptor3?.split("\0")).toEqual(
      expect.arrayContaining([
        "--clearenv",
        "--setenv",
        "INPUT_DATA",
        SECRET_VALUE,
        "PATH",
        "/sandbox/bin:/usr/bin",
      ]),
    );
    expect(plan.args.slice(plan.args.indexOf("--"))).toEqual(["--", ...given.command]);
  });
});

describe("resolveProvider", () => {
  it("takes SKILLBOX_SANDBOX_RUNTIME without probing", async () => {
    const provider = await resolveProvider({ env: { SKILLBOX_SANDBOX_RUNTIME: "bwrap" } });
    expect(provider.name).toBe("bwrap");
  });

  it("rejects an unknown SKILLBOX_SANDBOX_RUNTIME with SANDBOX_CONFIG_INVALID naming the variable", async () => {
    const error = await resolveProvider({ env: { SKILLBOX_SANDBOX_RUNTIME: "lxc" } }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: "SANDBOX_CONFIG_INVALID" });
    expect((error as Error).message).toContain('SKILLBOX_SANDBOX_RUNTIME="lxc"');
    expect((error as Error).message).toContain("podman");
  });
});

describeWithEngine("resolveProvider (probing this machine)", podmanRequirement(), () => {
  it("picks podman first on Linux when the variable is not set", async () => {
    const provider = await resolveProvider({ env: {}, platform: "linux", fresh: true });
    expect(provider.name).toBe("podman");
  });
});

describe("OutputCapture", () => {
  it("keeps everything below the limit", () => {
    const capture = new OutputCapture(16);
    capture.append(Buffer.from("hello "));
    capture.append(Buffer.from("world"));
    expect(capture.text()).toBe("hello world");
    expect(capture.totalBytes).toBe(11);
    expect(capture.truncated).toBe(false);
  });

  it("is not truncated at exactly the limit", () => {
    const capture = new OutputCapture(5);
    capture.append(Buffer.from("12345"));
    expect(capture.text()).toBe("12345");
    expect(capture.truncated).toBe(false);
  });

  it("keeps the first limit bytes and counts the dropped ones", () => {
    const capture = new OutputCapture(8);
    capture.append(Buffer.from("12345"));
    capture.append(Buffer.from("67890"));
    capture.append(Buffer.from("abcdef"));
    expect(capture.text()).toBe("12345678");
    expect(capture.totalBytes).toBe(16);
    expect(capture.truncated).toBe(true);
  });

  it("turns a character cut at the limit into U+FFFD", () => {
    const capture = new OutputCapture(5);
    capture.append(Buffer.from("abcd€"));
    expect(capture.text()).toBe("abcd\uFFFD");
    expect(capture.truncated).toBe(true);
  });

  it("does not keep a large chunk alive for its kept slice", () => {
    const capture = new OutputCapture(4);
    const chunk = Buffer.from("abcdefgh");
    capture.append(chunk);
    chunk.fill("z");
    expect(capture.text()).toBe("abcd");
  });
});
