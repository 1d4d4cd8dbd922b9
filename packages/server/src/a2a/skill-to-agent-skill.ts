import type { AgentSkill } from "@a2a-js/sdk";
import type { Skill } from "@skillbox/core";

/**
 * A skill as an agent card lists it. `id` and `name` are the skill name — what a message puts in
 * `metadata.skill`. Each example of the skill's manifest becomes the JSON a client can send as
 * it is (a data part, or text): `{"skill":"echo","input":{"msg":"hello"}}`.
 */
export function skillToAgentSkill(skill: Skill): AgentSkill {
  return {
    id: skill.name,
    name: skill.name,
    description:
      skill.description.trim() === "" ? `Skillbox skill ${skill.name}@${skill.version}` : skill.description,
    tags: [...skill.tags],
    examples: (skill.examples ?? []).flatMap((example) =>
      example.input === undefined ? [] : [JSON.stringify({ skill: skill.name, input: example.input })],
    ),
    inputModes: [],
    outputModes: [],
    securityRequirements: [],
  };
}
