import { defineSkill } from "@skillbox/core";
import { z } from "zod";

/**
 * The reference's echo skill: returns `msg` back as `echoed`. `skill.json` next to this file is the
 * manifest the loader registers; the zod schemas here mirror it so the handler is typed.
 */
export default defineSkill({
  input: z.object({ msg: z.string() }),
  output: z.object({ echoed: z.string() }),
  handler: (input) => ({ echoed: input.msg }),
});
