import { defineSkill } from "@skillbox/core";

// Runs inside the sandbox: the folder is mounted read-only at /skill, with no network, a
// read-only root and an unprivileged user. `@skillbox/core` resolves to its light entry there.
export default defineSkill({
  handler(input: { text: string }, context) {
    context.logger.info("counting", { length: input.text.length });
    const words = input.text.split(/\s+/).filter(Boolean).length;
    return { words, ranAs: process.getuid?.() ?? -1 };
  },
});
