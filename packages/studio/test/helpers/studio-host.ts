import { existsSync } from "node:fs";
import { join } from "node:path";
import { type CliProject, createCliProject, type RunningCli } from "@skillbox/test-helpers/cli-process";
import type { TreeContent } from "@skillbox/test-helpers/temporary-tree";
import { studioAssetsDirectory } from "../../src/node/index.js";

/** Options of {@link startStudioHost}. */
export interface StudioHostOptions {
  /** Skill (or interceptor) folders under `plugins/`: folder name → its files. */
  plugins?: Record<string, Record<string, TreeContent>>;
  /** `SKILLBOX_API_KEYS` of the server (`"key:owner,key2:owner2+approver"`); none: keyless, loopback only. */
  apiKeys?: string;
  /** The command and its flags; default `["dev", "--port", "0"]`. */
  args?: string[];
}

/** A real `skillbox dev` serving the Studio on loopback. */
export interface StudioHost {
  /** `http://127.0.0.1:<port>` (no trailing slash). */
  url: string;
  project: CliProject;
  server: RunningCli;
  /** Stops the server (SIGTERM, by its handle) and deletes the project. */
  stop(): Promise<void>;
}

const LISTENING = /listening\s+(http:\/\/[^\s]+) \(MCP at /;

/** A skill folder: `skill.json` (version 1.0.0, handler `./index.ts`) plus a handler whose body is `body`. */
export function skillFolder(manifest: Record<string, unknown>, body: string): Record<string, TreeContent> {
  return {
    "skill.json": { version: "1.0.0", handler: "./index.ts", ...manifest },
    "index.ts": `export default async function handler(input: any, ctx: any): Promise<unknown> {\n  ${body}\n}\n`,
  };
}

/**
 * Starts `skillbox dev` (the built CLI, as users run it) in a temporary project with `plugins`,
 * and waits until it listens. The caller stops it with `stop()` (afterAll).
 */
export async function startStudioHost(options: StudioHostOptions = {}): Promise<StudioHost> {
  if (!existsSync(join(studioAssetsDirectory, "index.html"))) {
    throw new Error("packages/studio/dist/app is missing: run `pnpm build` first");
  }
  const project = createCliProject();
  for (const [folder, files] of Object.entries(options.plugins ?? {})) {
    project.tree.writeFolder(`plugins/${folder}`, files);
  }
  const server = project.start(options.args ?? ["dev", "--port", "0"], {
    env: { SKILLBOX_API_KEYS: options.apiKeys },
  });
  try {
    const [, url] = await server.waitForOutput(LISTENING, 30_000);
    return {
      url: url!,
      project,
      server,
      async stop() {
        await server.stop("SIGTERM");
        await project.cleanup();
      },
    };
  } catch (error) {
    await project.cleanup();
    throw error;
  }
}
