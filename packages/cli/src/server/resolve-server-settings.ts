import { SkillboxError } from "@skillbox/core";
import { InvalidArgumentError } from "commander";
import { portSchema } from "../config/config-schema.js";
import type { ResolvedConfig } from "../config/load-config.js";

/** Where a server listens. */
export interface ServerAddress {
  port: number;
  hostname: string;
}

/** `--port` / `--host` as given. */
export interface ServerAddressFlags {
  port?: number;
  host?: string;
}

const DEFAULT_PORT = 3000;
/** Loopback by default: a development server is not for the network until someone says so. */
const DEFAULT_HOST = "127.0.0.1";

/** Commander parser of `--port`. */
export function parsePortFlag(value: string): number {
  const parsed = portSchema.safeParse(Number(value));
  if (value.trim() === "" || !parsed.success) {
    throw new InvalidArgumentError("must be a port number from 0 (any free port) to 65535");
  }
  return parsed.data;
}

function portFromEnvironment(): number | undefined {
  const text = process.env.SKILLBOX_PORT;
  if (text === undefined || text.trim() === "") return undefined;
  const parsed = portSchema.safeParse(Number(text));
  if (!parsed.success) {
    throw new SkillboxError(
      "CONFIG_INVALID",
      `SKILLBOX_PORT must be a port number from 0 (any free port) to 65535, got ${JSON.stringify(text)}`,
    );
  }
  return parsed.data;
}

/** The address: flags, then `SKILLBOX_PORT` / `SKILLBOX_HOST`, then the config file, then 3000 on 127.0.0.1. */
export function resolveServerAddress(config: ResolvedConfig, flags: ServerAddressFlags): ServerAddress {
  const hostFromEnvironment = process.env.SKILLBOX_HOST?.trim() || undefined;
  return {
    port: flags.port ?? portFromEnvironment() ?? config.server.port ?? DEFAULT_PORT,
    hostname: flags.host ?? hostFromEnvironment ?? config.server.host ?? DEFAULT_HOST,
  };
}

/**
 * API keys (key → owner, `owner+approver` for a key that may approve): `SKILLBOX_API_KEYS` ("key1:owner1,key2:owner2") when set, so secrets
 * can stay out of the config file, else the file's `server.apiKeys`; undefined when neither.
 */
export function resolveApiKeys(
  config: ResolvedConfig,
  parseApiKeys: (text: string) => Record<string, string>,
): Record<string, string> | undefined {
  const text = process.env.SKILLBOX_API_KEYS;
  if (text !== undefined && text.trim() !== "") return parseApiKeys(text);
  return config.server.apiKeys;
}
