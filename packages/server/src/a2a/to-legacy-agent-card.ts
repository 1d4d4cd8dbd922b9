import { type AgentCard, AgentCard as AgentCardJson } from "@a2a-js/sdk";
import { A2A_LEGACY_PROTOCOL_VERSION } from "@a2a-js/sdk/compat/v0_3";

/**
 * The card as an A2A v0.3 client reads it (`url`, `preferredTransport`, `protocolVersion`,
 * security schemes with a `type`), with the v1.0 `supportedInterfaces` embedded as the SDK's own
 * compat layer does, so a v1.0 client reading it still finds its interface. Covers what
 * {@link agentCardFor} puts in a card; the SDK's translator for this is not public.
 */
export function toLegacyAgentCard(card: AgentCard): Record<string, unknown> {
  const legacyInterface = card.supportedInterfaces.find(
    (entry) => entry.protocolVersion === A2A_LEGACY_PROTOCOL_VERSION,
  );
  const schemes = Object.entries(card.securitySchemes).flatMap(([name, entry]) =>
    entry.scheme?.$case === "httpAuthSecurityScheme"
      ? [
          [
            name,
            { type: "http", scheme: entry.scheme.value.scheme, description: entry.scheme.value.description },
          ],
        ]
      : [],
  );
  return {
    protocolVersion: A2A_LEGACY_PROTOCOL_VERSION,
    name: card.name,
    description: card.description,
    version: card.version,
    url: legacyInterface?.url ?? card.supportedInterfaces[0]?.url,
    preferredTransport: "JSONRPC",
    capabilities: {
      streaming: card.capabilities?.streaming ?? false,
      pushNotifications: card.capabilities?.pushNotifications ?? false,
    },
    defaultInputModes: card.defaultInputModes,
    defaultOutputModes: card.defaultOutputModes,
    skills: card.skills.map(({ id, name, description, tags, examples }) => ({
      id,
      name,
      description,
      tags,
      ...(examples.length > 0 ? { examples } : {}),
    })),
    ...(schemes.length > 0
      ? {
          securitySchemes: Object.fromEntries(schemes),
          security: card.securityRequirements.map((requirement) =>
            Object.fromEntries(Object.keys(requirement.schemes).map((name) => [name, []])),
          ),
        }
      : {}),
    supportedInterfaces: (AgentCardJson.toJSON(card) as { supportedInterfaces?: unknown })
      .supportedInterfaces,
  };
}
