import type { SkillContext } from "@skillbox/core";

// Runs inside the sandbox: the folder is mounted read-only at /skill, with no network, a
// read-only root and an unprivileged user. (`import { defineSkill } from "@skillbox/core"`
// works there too: it resolves to the light `@skillbox/core/handler` entry.)
export default function wordCount(input: { text: string }, context: SkillContext) {
  context.logger.info("counting", { length: input.text.length });
  const words = input.text.split(/\s+/).filter(Boolean).length;
  return { words, ranAs: process.getuid?.() ?? -1 };
}
