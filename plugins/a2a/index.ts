import { type DefinedSkill, defineSkill } from "@skillbox/core/handler";
import {
  type A2aSettings,
  type A2aSettingsOptions,
  readA2aSettings,
  resolveA2aSettings,
} from "./lib/a2a-settings.js";
import { sendMessage } from "./lib/send-message.js";
import { sendMessageInput, sendMessageOutput } from "./lib/send-message-schemas.js";

export {
  A2A_ENVIRONMENT,
  type A2aSettings,
  type A2aSettingsOptions,
  readA2aSettings,
  resolveA2aSettings,
} from "./lib/a2a-settings.js";
export type { SendMessageInput, SendMessageOutput } from "./lib/send-message-schemas.js";

/**
 * Creates the `a2a.send-message` skill: sends one message to a remote Agent2Agent agent and
 * returns its answer. With `settings` (validated now; omitted fields take their defaults) the
 * skill ignores the environment; without, it reads the `SKILLBOX_A2A_*` variables on every call.
 * No agent is reachable until `allowedHosts` (`SKILLBOX_A2A_ALLOWED_HOSTS`) names it.
 */
export function createSendMessageSkill(settings?: A2aSettingsOptions): DefinedSkill {
  const fixed: A2aSettings | undefined = settings === undefined ? undefined : resolveA2aSettings(settings);
  return defineSkill({
    input: sendMessageInput,
    output: sendMessageOutput,
    timeoutMs: 120_000,
    handler: (input, context) => sendMessage(input, fixed ?? readA2aSettings(), context),
  });
}

/** The skill the loader registers, configured from the environment on each call. */
export default createSendMessageSkill();
