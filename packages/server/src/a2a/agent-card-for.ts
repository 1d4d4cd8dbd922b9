import type { AgentCard, AgentSkill, SecurityScheme } from "@a2a-js/sdk";
import { duplicateInterfacesForLegacy } from "@a2a-js/sdk/compat/v0_3";
import type { SkillRegistry } from "@skillbox/core";
import { isGlobalOwner } from "@skillbox/core/internal";
import { SERVER_PACKAGE_VERSION } from "../mcp/server-package-version.js";
import { skillToAgentSkill } from "./skill-to-agent-skill.js";

/** Options of {@link agentCardFor}. */
export interface AgentCardOptions {
  registry: SkillRegistry;
  /** The JSON-RPC endpoint, such as `https://skills.example.com/a2a`. */
  endpointUrl: string;
  /** Whether the endpoint wants `Authorization: Bearer <API key>`: then the card says so. */
  apiKeysConfigured: boolean;
  /** Default `Skillbox`. */
  name?: string;
  description?: string;
  /** Default: the version of `@skillbox/server`. */
  version?: string;
}

/** The name of the security scheme the card declares when API keys are configured. */
const API_KEY_SCHEME = "skillboxApiKey";

const DEFAULT_DESCRIPTION =
  "Runs Skillbox skills, one per message: name the skill in message.metadata.skill " +
  '("echo" or "echo@^1") and send its input as a data part, or send one data part ' +
  '{"skill": "echo", "input": {…}}. The output comes back as a data part of the task\'s artifact.';

/**
 * The agent card (A2A v1.0, as the SDK types it) of a Skillbox server. Its skills are the enabled
 * skills of the global owners (`system`, `public`), one per name at the version a bare name runs
 * (the highest stable one); skills private to an owner are not advertised (their owner can still
 * run them). The one interface is JSON-RPC at `endpointUrl`, declared for protocol versions 1.0
 * and 0.3. Streaming is offered (`message/stream`, `tasks/resubscribe`); push notifications are not.
 */
export function agentCardFor(options: AgentCardOptions): AgentCard {
  const securitySchemes: Record<string, SecurityScheme> = options.apiKeysConfigured
    ? {
        [API_KEY_SCHEME]: {
          scheme: {
            $case: "httpAuthSecurityScheme",
            value: {
              scheme: "bearer",
              bearerFormat: "",
              description: "A Skillbox API key, sent as `Authorization: Bearer <key>`",
            },
          },
        },
      }
    : {};
  return {
    name: options.name ?? "Skillbox",
    description: options.description ?? DEFAULT_DESCRIPTION,
    supportedInterfaces: duplicateInterfacesForLegacy(
      [{ url: options.endpointUrl, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" }],
      ["JSONRPC"],
    ),
    provider: undefined,
    version: options.version ?? SERVER_PACKAGE_VERSION,
    capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
    securitySchemes,
    securityRequirements: options.apiKeysConfigured ? [{ schemes: { [API_KEY_SCHEME]: { list: [] } } }] : [],
    defaultInputModes: ["application/json", "text/plain"],
    defaultOutputModes: ["application/json"],
    skills: globalSkills(options.registry),
    signatures: [],
  };
}

function globalSkills(registry: SkillRegistry): AgentSkill[] {
  const names = new Set(
    registry.list().flatMap((skill) => (isGlobalOwner(skill.apiKeyId) ? [skill.name] : [])),
  );
  return [...names].flatMap((name) => {
    // Resolved as a global owner: the version a bare name runs for every caller without its own.
    const skill = registry.resolveVersion(name, undefined, "public");
    return skill === null ? [] : [skillToAgentSkill(skill)];
  });
}
